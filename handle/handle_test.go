package handle

import (
	"errors"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/drive"
)

// TestParse is the one table of spellings a model may use to name a file.
func TestParse(t *testing.T) {
	const id = "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	const key = "0-abcDEF_12"
	long := strings.Repeat("a", 128)
	tests := []struct {
		in      string
		want    Handle
		problem Problem
	}{
		// Bare ids.
		{id, Drive{Ref: drive.Ref{ID: id}}, 0},
		{"  " + id + "\n", Drive{Ref: drive.Ref{ID: id}}, 0},
		{long, Drive{Ref: drive.Ref{ID: long}}, 0},
		{long + "a", nil, NotAnID},
		{"", nil, Empty},
		{" \t", nil, Empty},
		{"Q3 report.pdf", nil, NotAnID},
		{"../../etc/passwd", nil, NotAnID},
		{"id'or'1", nil, NotAnID},
		// Drive and Docs links, with and without a resource key.
		{"https://drive.google.com/file/d/" + id + "/view?usp=sharing", Drive{Ref: drive.Ref{ID: id}}, 0},
		{"https://drive.google.com/file/d/" + id + "/view?resourcekey=" + key, Drive{Ref: drive.Ref{ID: id, ResourceKey: key}}, 0},
		{"https://drive.google.com/file/d/" + id + "/view?usp=drive_link&resourcekey=" + key, Drive{Ref: drive.Ref{ID: id, ResourceKey: key}}, 0},
		{"https://docs.google.com/document/d/" + id + "/edit", Drive{Ref: drive.Ref{ID: id}}, 0},
		{"https://docs.google.com/spreadsheets/d/" + id + "/edit#gid=0", Drive{Ref: drive.Ref{ID: id}}, 0},
		{"https://docs.google.com/presentation/d/" + id + "/edit?resourcekey=" + key, Drive{Ref: drive.Ref{ID: id, ResourceKey: key}}, 0},
		{"https://drive.google.com/open?id=" + id, Drive{Ref: drive.Ref{ID: id}}, 0},
		{"https://drive.google.com/uc?id=" + id + "&export=download", Drive{Ref: drive.Ref{ID: id}}, 0},
		{"https://drive.google.com/drive/folders/" + id, Drive{Ref: drive.Ref{ID: id}}, 0},
		{"https://drive.google.com/drive/u/0/folders/" + id + "?resourcekey=" + key, Drive{Ref: drive.Ref{ID: id, ResourceKey: key}}, 0},
		{"HTTPS://DRIVE.GOOGLE.COM/file/d/" + id + "/view", Drive{Ref: drive.Ref{ID: id}}, 0},
		{"http://drive.google.com/file/d/" + id + "/view", Drive{Ref: drive.Ref{ID: id}}, 0},
		{"https://evil.example/file/d/" + id + "/view", nil, ForeignLink},
		{"https://drive.google.com.evil.example/file/d/" + id, nil, ForeignLink},
		{"https://drive.google.com:8443/file/d/" + id, nil, ForeignLink},
		{"https://user@drive.google.com/file/d/" + id, nil, ForeignLink},
		{"https://drive.google.com/file/d/" + id + "/view?resourcekey=bad%20key", nil, ForeignLink},
		{"https://drive.google.com/drive/my-drive", nil, ForeignLink},
		{"https://example.com/report.pdf", nil, ForeignLink},
		// mcp-file:// handles from /upload.
		{"mcp-file://drivemail.example.com/" + id, Upload{Host: "drivemail.example.com", File: drive.Ref{ID: id}}, 0},
		{"MCP-FILE://h/" + id, Upload{Host: "h", File: drive.Ref{ID: id}}, 0},
		{"mcp-file://127.0.0.1:8080/" + id, Upload{Host: "127.0.0.1:8080", File: drive.Ref{ID: id}}, 0},
		{"mcp-file://h/" + id + "?x=1", nil, BadUpload},
		{"mcp-file://h/" + id + "#x", nil, BadUpload},
		{"mcp-file://h/a/b", nil, BadUpload},
		// file-transfer URIs of the MCP draft.
		{"mcp-file://drivemail.example.com/transfer/k3Jx9_Qw-2bN7vLpZs0aYe", Transfer{Host: "drivemail.example.com", ID: "k3Jx9_Qw-2bN7vLpZs0aYe"}, 0},
		{"mcp-file://h/transfer/short", nil, BadUpload},
		{"mcp-file://h/transfer/" + strings.Repeat("t", 16), Transfer{Host: "h", ID: strings.Repeat("t", 16)}, 0},
		{"mcp-file://h/transfer/" + strings.Repeat("t", 15), nil, BadUpload},
		{"mcp-file://h/transfer/" + strings.Repeat("t", 64), Transfer{Host: "h", ID: strings.Repeat("t", 64)}, 0},
		{"mcp-file://h/transfer/" + strings.Repeat("t", 65), nil, BadUpload},
		{"mcp-file://h/transfer/k3Jx9_Qw-2bN7vLpZs0aYe/x", nil, BadUpload},
		{"mcp-file://h/transfer/k3Jx9_Qw-2bN7vLp.s0aYe", nil, BadUpload},
		{"mcp-file://h/", nil, BadUpload},
		{"mcp-file:///" + id, nil, BadUpload},
		{"mcp-file://u@h/" + id, nil, BadUpload},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		var se *SyntaxError
		switch {
		case tt.problem == 0 && (err != nil || got != tt.want):
			t.Errorf("Parse(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		case tt.problem != 0 && (!errors.As(err, &se) || se.Problem != tt.problem || got != nil):
			t.Errorf("Parse(%q) = %#v, %v; want problem %d", tt.in, got, err, tt.problem)
		}
	}
}

// TestStringParsesBack: a handle's spelling is one Parse reads as the
// same handle, so a model can pass back what it was shown.
func TestStringParsesBack(t *testing.T) {
	for _, h := range []Handle{
		Drive{Ref: drive.Ref{ID: "1AbC"}},
		Drive{Ref: drive.Ref{ID: "1AbC", ResourceKey: "0-k"}},
		Upload{Host: "drivemail.example.com", File: drive.Ref{ID: "1AbC"}},
		Transfer{Host: "drivemail.example.com", ID: "k3Jx9_Qw-2bN7vLpZs0aYe"},
	} {
		if got, err := Parse(h.String()); err != nil || got != h {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", h.String(), got, err, h)
		}
	}
}

func TestDriveRef(t *testing.T) {
	ref := drive.Ref{ID: "1AbC", ResourceKey: "0-k"}
	for _, h := range []Handle{Drive{Ref: ref}, Upload{Host: "h", File: ref}} {
		if got, ok := DriveRef(h); !ok || got != ref {
			t.Errorf("DriveRef(%#v) = %+v, %v", h, got, ok)
		}
	}
	if _, ok := DriveRef(nil); ok {
		t.Error("DriveRef(nil) names a file")
	}
	if _, ok := DriveRef(Transfer{Host: "h", ID: "k3Jx9_Qw-2bN7vLpZs0aYe"}); ok {
		t.Error("a Transfer names a Drive file without the store")
	}
}

func TestMustParsePanicsOnABadSpelling(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse of a file name did not panic")
		}
	}()
	MustParse("Q3 report.pdf")
}
