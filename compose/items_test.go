package compose

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

// TestValidateAttachmentsSources: each source becomes an item, a Drive
// file with the reference its handle names (a link's resource key kept),
// content decoded with its type.
func TestValidateAttachmentsSources(t *testing.T) {
	const id = "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	hello := base64.StdEncoding.EncodeToString([]byte("hello"))
	tests := []struct {
		name     string
		att      Attachment
		wantID   string
		wantData string
		wantType string
	}{
		{"bare id", Attachment{Source: DriveFile{Handle: handle.MustParse(id)}}, id, "", ""},
		{"drive link", Attachment{Source: DriveFile{Handle: handle.MustParse("https://drive.google.com/file/d/" + id + "/view")}}, id, "", ""},
		{"drive link with a resource key", Attachment{Source: DriveFile{Handle: handle.MustParse("https://drive.google.com/file/d/" + id + "/view?resourcekey=0-k")}}, id, "", ""},
		{"mcp-file handle", Attachment{Source: DriveFile{Handle: handle.MustParse("mcp-file://drivemail.example.com/" + id)}}, id, "", ""},
		{"text", Attachment{Name: "notes.csv", Source: Content{Encoding: Text, Data: "a,b\n1,2\n"}}, "", "a,b\n1,2\n", "text/csv; charset=utf-8"},
		{"text without known extension", Attachment{Name: "notes", Source: Content{Encoding: Text, Data: "hi"}}, "", "hi", "text/plain; charset=utf-8"},
		{"empty text is a file", Attachment{Name: "empty.txt", Source: Content{Encoding: Text, Data: ""}}, "", "", "text/plain; charset=utf-8"},
		{"base64", Attachment{Name: "a.bin", Source: Content{Encoding: Base64, Data: hello}}, "", "hello", "application/octet-stream"},
		{"base64 unpadded url-safe with line breaks", Attachment{Name: "a.bin", Source: Content{Encoding: Base64, Data: "_-_-\n_w"}}, "", "\xff\xef\xfe\xff", "application/octet-stream"},
		{"content base64", Attachment{Name: "a.txt", Source: Content{Encoding: Base64, Data: hello}}, "", "hello", "text/plain; charset=utf-8"},
		{"content data URI", Attachment{Name: "a.png", Source: Content{Encoding: DataURI, Data: "data:image/png;base64," + hello}}, "", "hello", "image/png"},
		{"content data URI percent", Attachment{Name: "a.txt", Source: Content{Encoding: DataURI, Data: "data:text/plain,hi%20there"}}, "", "hi there", "text/plain; charset=utf-8"},
		{"explicit mime type wins", Attachment{Name: "a.dat", Source: Content{Encoding: Base64, Data: hello, MimeType: "application/x-thing"}}, "", "hello", "application/x-thing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items, err := validateAttachments([]Attachment{tt.att})
			if err != nil {
				t.Fatalf("validateAttachments: %v", err)
			}
			it := items[0]
			if it.ref.ID != tt.wantID {
				t.Errorf("id = %q, want %q", it.ref.ID, tt.wantID)
			}
			if d, ok := tt.att.Source.(DriveFile); ok {
				if want, _ := handle.DriveRef(d.Handle); it.ref != want {
					t.Errorf("ref = %+v, want the handle's %+v unchanged", it.ref, want)
				}
			}
			if tt.wantID == "" {
				if string(it.data) != tt.wantData {
					t.Errorf("data = %q, want %q", it.data, tt.wantData)
				}
				if it.dataType != tt.wantType {
					t.Errorf("mime type = %q, want %q", it.dataType, tt.wantType)
				}
			}
		})
	}
}

func TestValidateAttachmentsRefusals(t *testing.T) {
	big := strings.Repeat("a", MaxModelBytes)
	half := strings.Repeat("a", MaxModelBytes/2)
	const id = "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	many := make([]Attachment, MaxEntries+1)
	for i := range many {
		many[i] = Attachment{Source: DriveFile{Handle: handle.MustParse("1AbCdEfGhIjKlMnOpQrStUvWxYz012345")}}
	}
	documented := DocumentedKinds(t)
	tests := []struct {
		name string
		atts []Attachment
		want string
		kind kind
	}{
		{"too many entries", many, "lists 26 attachments", kindTooManyEntries},
		{"content without name", []Attachment{{Source: Content{Encoding: Text, Data: "x"}}}, "has content but no name", kindNoName},
		{"content with a blank name", []Attachment{{Name: " ", Source: Content{Encoding: Base64, Data: "eA=="}}}, `Give it "name"`, kindNoName},
		{"gmail attachment without a name", []Attachment{{Source: GmailAttachment{Message: handle.Message{ID: "18f3a2b4c5d6e7f8"}, Name: " "}}}, `names Gmail message 18f3a2b4c5d6e7f8 but no attachment of it. Give "attachment"`, kindNoName},
		{"link with as", []Attachment{{Source: DriveFile{Handle: handle.MustParse(id), Link: true, As: "pdf"}}}, `both "link": true and "as": "pdf"`, kindBadOption},
		{"link with sheet", []Attachment{{Source: DriveFile{Handle: handle.MustParse(id), Link: true, Sheet: "Q1"}}}, `both "link": true and "sheet"`, kindBadOption},
		{"bad base64", []Attachment{{Name: "a.bin", Source: Content{Encoding: Base64, Data: "@@@@"}}}, "not valid base64", kindBadBase64},
		{"bad data URI", []Attachment{{Name: "a.bin", Source: Content{Encoding: DataURI, Data: "data:image/png;base64"}}}, "no comma", kindBadDataURI},
		{"bad mime type", []Attachment{{Name: "a.bin", Source: Content{Encoding: Base64, Data: "aGk=", MimeType: "text"}}}, "is not a MIME type", kindBadMimeType},
		{"text over 1 MiB", []Attachment{{Name: "a.txt", Source: Content{Encoding: Text, Data: big + "a"}}}, "limited to 1 MiB", kindContentTooLarge},
		{"base64 over 1 MiB", []Attachment{{Name: "a.bin", Source: Content{Encoding: Base64, Data: base64.StdEncoding.EncodeToString([]byte(big + "a"))}}}, "limited to 1 MiB", kindContentTooLarge},
		{"sum over 1 MiB", []Attachment{{Name: "a.txt", Source: Content{Encoding: Text, Data: half}}, {Name: "b.txt", Source: Content{Encoding: Text, Data: half + "a"}}}, "Attachment 2", kindContentTooLarge},
		{"invalid UTF-8 text", []Attachment{{Name: "a.txt", Source: Content{Encoding: Text, Data: "a\xffb"}}}, "not valid UTF-8", kindBadText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := validateAttachments(tt.atts)
			r, ok := refusal.As(err)
			if !ok {
				t.Fatalf("validateAttachments error = %v, want a refusal", err)
			}
			if !strings.Contains(r.Error(), tt.want) {
				t.Errorf("refusal %q does not mention %q", r.Error(), tt.want)
			}
			if r.Kind != tt.kind || !documented[string(r.Kind)] {
				t.Errorf("kind = %q, want %q, listed in docs/operations.md", r.Kind, tt.kind)
			}
		})
	}
}

func TestValidateAttachmentsAtLimits(t *testing.T) {
	exactly := strings.Repeat("a", MaxModelBytes)
	if _, err := validateAttachments([]Attachment{{Name: "a.txt", Source: Content{Encoding: Text, Data: exactly}}}); err != nil {
		t.Errorf("1 MiB of text: %v", err)
	}
	half := strings.Repeat("a", MaxModelBytes/2)
	if _, err := validateAttachments([]Attachment{{Name: "a.txt", Source: Content{Encoding: Text, Data: half}}, {Name: "b.bin", Source: Content{Encoding: Base64, Data: base64.StdEncoding.EncodeToString([]byte(half))}}}); err != nil {
		t.Errorf("two halves of 1 MiB: %v", err)
	}
	entries := make([]Attachment, MaxEntries)
	for i := range entries {
		entries[i] = Attachment{Source: DriveFile{Handle: handle.MustParse("1AbCdEfGhIjKlMnOpQrStUvWxYz012345")}}
	}
	if _, err := validateAttachments(entries); err != nil {
		t.Errorf("%d entries: %v", MaxEntries, err)
	}
}

// TestAnEntryWithoutASourceIsABug: the type leaves a caller no way to
// give two sources; one that gives none has a bug, which is an internal
// error, never a sentence for the model.
func TestAnEntryWithoutASourceIsABug(t *testing.T) {
	_, err := validateAttachments([]Attachment{{Name: "x"}})
	if err == nil || isRefusal(err) {
		t.Fatalf("err = %v, want an internal error", err)
	}
}
