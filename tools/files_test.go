package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/handle"
)

const chatURL = "https://files.oaiusercontent.com/file-Le44TZ?se=2026-10-10T14%3A55%3A53Z&sp=r&sig=abc"

// TestClientFilesArePassedOn: the files argument, a list or one object,
// becomes ClientFile entries after those of attachments, with what the
// client said of each file.
func TestClientFilesArePassedOn(t *testing.T) {
	for _, tc := range []struct {
		name, files string
	}{
		{"a list", `[{"download_url":"` + chatURL + `","file_id":"file-Le44TZ","mime_type":"application/pdf","file_name":"Q3.pdf"}]`},
		{"one object", `{"download_url":"` + chatURL + `","file_id":"file-Le44TZ","mime_type":"application/pdf","file_name":"Q3.pdf"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			res := h.call("send_email", `{"to":"ana@example.com","subject":"Q3","body_text":"here","attachments":["`+id33+`"],"files":`+tc.files+`}`)
			if res.IsError {
				t.Fatalf("refused: %s", res.text())
			}
			want := []compose.Attachment{
				{Source: compose.DriveFile{Handle: handle.MustParse(id33)}},
				{Source: compose.ClientFile{URL: chatURL, FileID: "file-Le44TZ", MimeType: "application/pdf", Name: "Q3.pdf"}},
			}
			if !reflect.DeepEqual(h.mail.req.Attachments, want) {
				t.Fatalf("attachments = %+v\nwant %+v", h.mail.req.Attachments, want)
			}
		})
	}
}

// TestClientFileRefusals: what a client sends instead of a file object
// is refused with a sentence that says what to do, never a protocol
// error, and nothing is sent.
func TestClientFileRefusals(t *testing.T) {
	tests := []struct {
		name  string
		files string
		wants []string
	}{
		{"a mobile client's placeholder", `"chat_upload"`, []string{`Attachment 1 ("files" entry 1) is "chat_upload"`, "did not hand over the file", "web or desktop", "Google Drive"}},
		{"a placeholder in a list", `["chat_upload"]`, []string{`"chat_upload"`, "did not hand over the file"}},
		{"a number", `[7]`, []string{"is a number", "file object"}},
		{"no download_url", `[{"file_id":"file-1"}]`, []string{`"download_url" is required`}},
		{"not https", `[{"download_url":"http://files.oaiusercontent.com/f","file_id":"file-1"}]`, []string{"not an https URL"}},
		{"an unknown field", `[{"download_url":"` + chatURL + `","file_id":"file-1","path":"/tmp/x"}]`, []string{`unknown field "path"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.mustRefuse("send_email", `{"to":"ana@example.com","subject":"s","body_text":"x","files":`+tc.files+`}`, tc.wants...)
			if h.mail.called != 0 {
				t.Fatal("Mail.Send was called")
			}
		})
	}
}

// TestClientFilesCountAsEntries: attachments and files share the entry
// limit, at its edge and one past it.
func TestClientFilesCountAsEntries(t *testing.T) {
	file := `{"download_url":"` + chatURL + `","file_id":"file-1"}`
	args := func(n int) string {
		ids := strings.TrimSuffix(strings.Repeat(`"`+id33+`",`, compose.MaxEntries-n), ",")
		return `{"to":"a@example.com","subject":"s","attachments":[` + ids + `],"files":[` + strings.TrimSuffix(strings.Repeat(file+",", n+1), ",") + `]}`
	}
	h := newHarness(t, nil)
	if res := h.call("send_email", args(0)); !res.IsError {
		t.Fatalf("%d entries were accepted", compose.MaxEntries+1)
	}
	h.mustRefuse("send_email", args(0), "26 attachments")
	h = newHarness(t, nil)
	ids := strings.TrimSuffix(strings.Repeat(`"`+id33+`",`, compose.MaxEntries-1), ",")
	if res := h.call("send_email", `{"to":"a@example.com","subject":"s","attachments":[`+ids+`],"files":[`+file+`]}`); res.IsError {
		t.Fatalf("%d entries refused: %s", compose.MaxEntries, res.text())
	}
}

// TestToolsDeclareTheirFileParams: send_email and create_draft list the
// files argument in _meta["openai/fileParams"], and it is a top-level
// property of their schema, as ChatGPT requires.
func TestToolsDeclareTheirFileParams(t *testing.T) {
	h := newHarness(t, nil)
	var list struct {
		Tools []struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	raw := h.rpc("tools/list", map[string]any{})
	var withMeta struct {
		Tools []struct {
			Name string                     `json:"name"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &withMeta); err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{}
	for _, tl := range withMeta.Tools {
		if p, ok := tl.Meta[metaFileParams]; ok {
			declared[tl.Name] = string(p)
		}
	}
	want := map[string]string{"send_email": `["files"]`, "create_draft": `["files"]`, "save_to_drive": `["file"]`}
	if !reflect.DeepEqual(declared, want) {
		t.Fatalf("openai/fileParams = %v, want %v", declared, want)
	}
	for _, tl := range list.Tools {
		if tl.Name != "send_email" && tl.Name != "create_draft" {
			continue
		}
		var p struct {
			Type  string `json:"type"`
			Items struct {
				Required []string `json:"required"`
			} `json:"items"`
		}
		if err := json.Unmarshal(tl.InputSchema.Properties[filesArg], &p); err != nil {
			t.Fatalf("%s: %v", tl.Name, err)
		}
		if p.Type != "array" || !reflect.DeepEqual(p.Items.Required, []string{"download_url", "file_id"}) {
			t.Errorf("%s: files schema %+v", tl.Name, p)
		}
	}
}
