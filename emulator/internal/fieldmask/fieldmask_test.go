package fieldmask

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	obj := map[string]any{
		"kind": "k", "nextPageToken": "t",
		"files": []map[string]any{{"id": "1", "name": "a", "capabilities": map[string]any{"canDownload": true, "canEdit": false}}},
	}
	tests := []struct {
		fields string
		want   string
	}{
		{"files(id,name),nextPageToken", `{"files":[{"id":"1","name":"a"}],"nextPageToken":"t"}`},
		{"files/id", `{"files":[{"id":"1"}]}`},
		{"files.capabilities.canDownload", `{"files":[{"capabilities":{"canDownload":true}}]}`},
		{"files(capabilities(canEdit)),kind", `{"files":[{"capabilities":{"canEdit":false}}],"kind":"k"}`},
		{"files(id),files(name)", `{"files":[{"id":"1","name":"a"}]}`},
		{"files,files(id)", `{"files":[{"capabilities":{"canDownload":true,"canEdit":false},"id":"1","name":"a"}]}`},
		{"files(*)", `{"files":[{"capabilities":{"canDownload":true,"canEdit":false},"id":"1","name":"a"}]}`},
		{" kind , files( id ) ", `{"files":[{"id":"1"}],"kind":"k"}`},
		{"missing", `{}`},
	}
	for _, tt := range tests {
		m, err := Parse(tt.fields)
		if err != nil {
			t.Errorf("%q: %v", tt.fields, err)
			continue
		}
		b, _ := json.Marshal(m.Apply(obj))
		if string(b) != tt.want {
			t.Errorf("%q = %s, want %s", tt.fields, b, tt.want)
		}
	}
	for _, bad := range []string{"", "files(", "files)", "files(id", "a,,b", "a/", "(a)", "a b", "a(b)c", strings.Repeat("a(", 20) + "b" + strings.Repeat(")", 20), strings.Repeat("a,", MaxLen)} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestApplyToDecodedJSON(t *testing.T) {
	var obj map[string]any
	if err := json.Unmarshal([]byte(`{"messages":[{"id":"a","threadId":"t"},{"id":"b","threadId":"u"}],"resultSizeEstimate":2}`), &obj); err != nil {
		t.Fatal(err)
	}
	m, err := Parse("messages/id")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m.Apply(obj))
	if want := `{"messages":[{"id":"a"},{"id":"b"}]}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestUnknown(t *testing.T) {
	m, _ := Parse("id,name,bogus(x),*")
	if got := m.Unknown(map[string]bool{"id": true, "name": true}); got != "bogus" {
		t.Errorf("Unknown = %q, want bogus", got)
	}
	if got := m.Unknown(map[string]bool{"id": true, "name": true, "bogus": true}); got != "" {
		t.Errorf("Unknown = %q, want none", got)
	}
}
