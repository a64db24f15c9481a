package drive

import (
	"strings"
	"testing"
)

func TestParseRef(t *testing.T) {
	const id = "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	tests := []struct {
		in   string
		want Ref
		ok   bool
	}{
		{id, Ref{ID: id}, true},
		{"  " + id + "\n", Ref{ID: id}, true},
		{"https://drive.google.com/file/d/" + id + "/view?usp=sharing", Ref{ID: id}, true},
		{"https://drive.google.com/file/d/" + id + "/view?resourcekey=0-abcDEF_12", Ref{ID: id, ResourceKey: "0-abcDEF_12"}, true},
		{"https://docs.google.com/document/d/" + id + "/edit", Ref{ID: id}, true},
		{"https://docs.google.com/spreadsheets/d/" + id + "/edit#gid=0", Ref{ID: id}, true},
		{"https://drive.google.com/open?id=" + id, Ref{ID: id}, true},
		{"", Ref{}, false},
		{"has space", Ref{}, false},
		{"../../etc/passwd", Ref{}, false},
		{"id'or'1", Ref{}, false},
		{strings.Repeat("a", maxIDLen), Ref{ID: strings.Repeat("a", maxIDLen)}, true},
		{strings.Repeat("a", maxIDLen+1), Ref{}, false},
		{"http://drive.google.com/file/d/" + id + "/view", Ref{}, false},
		{"https://evil.example/file/d/" + id + "/view", Ref{}, false},
		{"https://drive.google.com/file/d/" + id + "/view?resourcekey=bad%20key", Ref{}, false},
		{"https://drive.google.com/drive/my-drive", Ref{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseRef(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
