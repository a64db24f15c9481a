package compose

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func strptr(s string) *string { return &s }

func TestParseItemsSources(t *testing.T) {
	const id = "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	hello := base64.StdEncoding.EncodeToString([]byte("hello"))
	tests := []struct {
		name     string
		att      Attachment
		wantID   string
		wantData string
		wantType string
	}{
		{"bare id", Attachment{FileID: id}, id, "", ""},
		{"drive link", Attachment{FileID: "https://drive.google.com/file/d/" + id + "/view"}, id, "", ""},
		{"mcp-file handle", Attachment{FileID: "mcp-file://drivemail.example.com/" + id}, id, "", ""},
		{"text", Attachment{Name: "notes.csv", Text: strptr("a,b\n1,2\n")}, "", "a,b\n1,2\n", "text/csv; charset=utf-8"},
		{"text without known extension", Attachment{Name: "notes", Text: strptr("hi")}, "", "hi", "text/plain; charset=utf-8"},
		{"empty text is a file", Attachment{Name: "empty.txt", Text: strptr("")}, "", "", "text/plain; charset=utf-8"},
		{"base64", Attachment{Name: "a.bin", Base64: hello}, "", "hello", "application/octet-stream"},
		{"base64 unpadded url-safe with line breaks", Attachment{Name: "a.bin", Base64: "_-_-\n_w"}, "", "\xff\xef\xfe\xff", "application/octet-stream"},
		{"content base64", Attachment{Name: "a.txt", Content: hello}, "", "hello", "text/plain; charset=utf-8"},
		{"content data URI", Attachment{Name: "a.png", Content: "data:image/png;base64," + hello}, "", "hello", "image/png"},
		{"content data URI percent", Attachment{Name: "a.txt", Content: "data:text/plain,hi%20there"}, "", "hi there", "text/plain; charset=utf-8"},
		{"explicit mime type wins", Attachment{Name: "a.dat", Base64: hello, MimeType: "application/x-thing"}, "", "hello", "application/x-thing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := parseItems([]Attachment{tt.att})
			if err != nil {
				t.Fatalf("parseItems: %v", err)
			}
			it := items[0]
			if it.ref.ID != tt.wantID {
				t.Errorf("id = %q, want %q", it.ref.ID, tt.wantID)
			}
			if tt.wantID == "" {
				if string(it.data) != tt.wantData {
					t.Errorf("data = %q, want %q", it.data, tt.wantData)
				}
				if it.att.MimeType != tt.wantType {
					t.Errorf("mime type = %q, want %q", it.att.MimeType, tt.wantType)
				}
			}
		})
	}
}

func TestParseItemsRefusals(t *testing.T) {
	big := strings.Repeat("a", MaxModelBytes)
	half := strings.Repeat("a", MaxModelBytes/2)
	many := make([]Attachment, MaxEntries+1)
	for i := range many {
		many[i] = Attachment{FileID: "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"}
	}
	documented := DocumentedKinds(t)
	tests := []struct {
		name string
		atts []Attachment
		want string
		kind kind
	}{
		{"too many entries", many, "lists 26 attachments", kindTooManyEntries},
		{"no source", []Attachment{{Name: "x"}}, "is empty", kindNoSource},
		{"two sources", []Attachment{{FileID: "abcdefghijk", Text: strptr("x"), Name: "x"}}, "more than one source", kindSeveralSources},
		{"bad id", []Attachment{{FileID: "not an id"}}, "is not a Drive file id", kindBadFileID},
		{"bad handle", []Attachment{{FileID: "mcp-file://host/a/b"}}, "is not a Drive file id", kindBadFileID},
		{"handle without host", []Attachment{{FileID: "mcp-file:///abcdefghijk"}}, "is not a Drive file id", kindBadFileID},
		{"content without name", []Attachment{{Text: strptr("x")}}, "has content but no name", kindNoName},
		{"as on text", []Attachment{{Name: "a.txt", Text: strptr("x"), As: "pdf"}}, "apply only to Drive files", kindBadOption},
		{"bad base64", []Attachment{{Name: "a.bin", Base64: "@@@@"}}, "not valid base64", kindBadBase64},
		{"bad data URI", []Attachment{{Name: "a.bin", Content: "data:image/png;base64"}}, "no comma", kindBadDataURI},
		{"bad mime type", []Attachment{{Name: "a.bin", Base64: "aGk=", MimeType: "text"}}, "is not a MIME type", kindBadMimeType},
		{"text over 1 MiB", []Attachment{{Name: "a.txt", Text: strptr(big + "a")}}, "limited to 1 MiB", kindContentTooLarge},
		{"base64 over 1 MiB", []Attachment{{Name: "a.bin", Base64: base64.StdEncoding.EncodeToString([]byte(big + "a"))}}, "limited to 1 MiB", kindContentTooLarge},
		{"sum over 1 MiB", []Attachment{{Name: "a.txt", Text: strptr(half)}, {Name: "b.txt", Text: strptr(half + "a")}}, "Attachment 2", kindContentTooLarge},
		{"invalid UTF-8 text", []Attachment{{Name: "a.txt", Text: strptr("a\xffb")}}, "not valid UTF-8", kindBadText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseItems(tt.atts)
			var r *Refusal
			if !errors.As(err, &r) {
				t.Fatalf("parseItems error = %v, want a Refusal", err)
			}
			if !strings.Contains(r.Error(), tt.want) {
				t.Errorf("refusal %q does not mention %q", r.Error(), tt.want)
			}
			if r.kind != tt.kind || !documented[string(r.kind)] {
				t.Errorf("kind = %q, want %q, listed in docs/operations.md", r.kind, tt.kind)
			}
		})
	}
}

func TestParseItemsAtLimits(t *testing.T) {
	exactly := strings.Repeat("a", MaxModelBytes)
	if _, err := parseItems([]Attachment{{Name: "a.txt", Text: strptr(exactly)}}); err != nil {
		t.Errorf("1 MiB of text: %v", err)
	}
	half := strings.Repeat("a", MaxModelBytes/2)
	if _, err := parseItems([]Attachment{{Name: "a.txt", Text: strptr(half)}, {Name: "b.bin", Base64: base64.StdEncoding.EncodeToString([]byte(half))}}); err != nil {
		t.Errorf("two halves of 1 MiB: %v", err)
	}
	entries := make([]Attachment, MaxEntries)
	for i := range entries {
		entries[i] = Attachment{FileID: "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"}
	}
	if _, err := parseItems(entries); err != nil {
		t.Errorf("%d entries: %v", MaxEntries, err)
	}
}
