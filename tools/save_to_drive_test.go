package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/upload"
)

// TestSaveToDriveClientFile: the file object goes to the service as the
// client gave it, name overriding the client's file_name (its extension
// kept); the answer is the Drive id to attach.
func TestSaveToDriveClientFile(t *testing.T) {
	s := &fakeSaver{res: upload.Result{FileID: id33, Name: "Q3.pdf", MimeType: "application/pdf", Size: 2048, Handle: "mcp-file://dm.example.com/" + id33}}
	h := newHarness(t, func(d *Deps) { d.Saver = s })
	for _, tt := range []struct {
		args string
		want upload.SaveRequest
	}{
		{`{"file":{"download_url":"` + chatURL + `","file_id":"file-1","mime_type":"application/pdf","file_name":"scan.pdf"},"name":"Q3.pdf","folder_id":"` + id33 + `"}`,
			upload.SaveRequest{URL: chatURL, MimeType: "application/pdf", Name: "Q3.pdf", FolderID: id33}},
		{`{"file":{"download_url":"` + chatURL + `","file_id":"file-1","file_name":"scan.pdf"},"file_name":"Q3"}`,
			upload.SaveRequest{URL: chatURL, Name: "Q3.pdf"}},
		{`{"file":{"download_url":"` + chatURL + `","file_id":"file-1"}}`,
			upload.SaveRequest{URL: chatURL}},
	} {
		s.clientCalls, s.req = 0, upload.SaveRequest{}
		res := h.call("save_to_drive", tt.args)
		if res.IsError {
			t.Fatalf("%s: refused: %s", tt.args, res.text())
		}
		if s.clientCalls != 1 || s.req != tt.want {
			t.Errorf("%s: request = %+v (%d calls), want %+v", tt.args, s.req, s.clientCalls, tt.want)
		}
		var out SaveResult
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.FileID != id33 || out.Size != 2048 {
			t.Fatalf("structuredContent = %s", res.StructuredContent)
		}
	}
}

func TestSaveToDriveRefusals(t *testing.T) {
	for args, wants := range map[string][]string{
		`{}`:                     {`"file" is required`},
		`{"file":"chat_upload"}`: {`"file" is "chat_upload"`, "did not hand over the file"},
		`{"file":{"download_url":"http://x.example/f","file_id":"f"}}`:                      {"not an https URL"},
		`{"file":{"download_url":"` + chatURL + `","file_id":"f"},"folder_id":"My Folder"}`: {`"folder_id": "My Folder" is not a Drive file id`},
		// Mail arguments where mail is not read.
		`{"message_id":"18f3a2b4c5d6e7f8","attachment":"a.pdf"}`: {"started without --read-mail"},
	} {
		s := &fakeSaver{}
		h := newHarness(t, func(d *Deps) { d.Saver = s })
		h.mustRefuse("save_to_drive", args, wants...)
		if s.clientCalls != 0 || s.saveCalls != 0 {
			t.Errorf("%s: the service was called", args)
		}
	}
	h := newHarness(t, nil)
	h.mustRefuse("save_to_drive", `{"file":{"download_url":"`+chatURL+`","file_id":"f"}}`, "does not save files from the conversation")
}

// TestSaveToDriveTakesOneSource: exactly one source per call, said in
// words where mail is read and where it is not.
func TestSaveToDriveTakesOneSource(t *testing.T) {
	file := `"file":{"download_url":"` + chatURL + `","file_id":"f"}`
	h, r, s := mailHarness(t, true, true)
	r.msg = gmail.Message{ID: "18f3a2b4c5d6e7f8", Attachments: []gmail.Attachment{{Name: "a.pdf", MimeType: "application/pdf", Size: 2}}}
	h.mustRefuse("save_to_drive", `{`+file+`,"message_id":"18f3a2b4c5d6e7f8","attachment":"a.pdf"}`, "one file per call", `"file"`, `"message_id" with "attachment"`, "not both")
	h.mustRefuse("save_to_drive", `{`+file+`,"attachment":"a.pdf"}`, "not both")
	h.mustRefuse("save_to_drive", `{"name":"x.pdf"}`, `"file"`, `"message_id" and "attachment"`, "search_mail")
	h.mustRefuse("save_to_drive", `{"message_id":"18f3a2b4c5d6e7f8"}`, `"attachment" is required`)
	if s.clientCalls+s.saveCalls != 0 || r.opened != 0 {
		t.Fatalf("a refused call reached the service (%d, %d) or Gmail (%d)", s.clientCalls, s.saveCalls, r.opened)
	}
	// filename names the Gmail attachment when message_id is given.
	r.data = []byte("%P")
	if res := h.call("save_to_drive", `{"message_id":"18f3a2b4c5d6e7f8","filename":"a.pdf"}`); res.IsError || s.got.Name != "a.pdf" {
		t.Fatalf("filename as the attachment: %s, saved %+v", res.text(), s.got)
	}
	// Both sources work for a mail user.
	if res := h.call("save_to_drive", `{`+file+`}`); res.IsError || s.clientCalls != 1 {
		t.Fatalf("a client file where mail is read: %s", res.text())
	}
}

// TestSaveToDriveListing: everyone sees save_to_drive with file, declared
// as a ChatGPT file parameter; only a mail user sees its Gmail
// arguments, and its description sends the model to search_mail.
func TestSaveToDriveListing(t *testing.T) {
	type listed struct {
		Description string `json:"description"`
		Meta        struct {
			FileParams []string `json:"openai/fileParams"`
		} `json:"_meta"`
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		} `json:"inputSchema"`
	}
	find := func(h *harness) listed {
		var list struct {
			Tools []struct {
				Name string `json:"name"`
				listed
			} `json:"tools"`
		}
		if err := json.Unmarshal(h.rpc("tools/list", map[string]any{}), &list); err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			if tl.Name == "save_to_drive" {
				return tl.listed
			}
		}
		t.Fatal("save_to_drive is not listed")
		return listed{}
	}
	for _, tt := range []struct {
		enabled, granted bool
		mail             bool
	}{{false, false, false}, {true, false, false}, {false, true, false}, {true, true, true}} {
		h, _, _ := mailHarness(t, tt.enabled, tt.granted)
		got := find(h)
		_, hasFile := got.InputSchema.Properties["file"]
		_, hasMsg := got.InputSchema.Properties["message_id"]
		_, hasAtt := got.InputSchema.Properties["attachment"]
		if !hasFile || len(got.Meta.FileParams) != 1 || got.Meta.FileParams[0] != "file" {
			t.Errorf("enabled %v granted %v: file %v, fileParams %v", tt.enabled, tt.granted, hasFile, got.Meta.FileParams)
		}
		if hasMsg != tt.mail || hasAtt != tt.mail || strings.Contains(got.Description, "search_mail") != tt.mail {
			t.Errorf("enabled %v granted %v: message_id %v, attachment %v, description %q", tt.enabled, tt.granted, hasMsg, hasAtt, got.Description)
		}
		if tt.mail && len(got.InputSchema.Required) != 0 {
			t.Errorf("with mail, required = %v: either source may be given", got.InputSchema.Required)
		}
	}
}

// TestMailDefinitionsKeepFileArguments: where mail is read, send_email
// and create_draft gain the mail arguments and keep the chat client's
// files (declared in _meta) and, with --file-transfer, file_uris.
func TestMailDefinitionsKeepFileArguments(t *testing.T) {
	for _, fileTransfer := range []bool{false, true} {
		h := newHarness(t, func(d *Deps) { d.ReadMailEnabled, d.FileTransfer = true, fileTransfer })
		h.user.GoogleScopes = append(h.user.GoogleScopes, scopeReadonly)
		var list struct {
			Tools []struct {
				Name string `json:"name"`
				Meta struct {
					FileParams []string `json:"openai/fileParams"`
				} `json:"_meta"`
				InputSchema struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(h.rpc("tools/list", map[string]any{}), &list); err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, tl := range list.Tools {
			if tl.Name != "send_email" && tl.Name != "create_draft" {
				continue
			}
			seen++
			props := tl.InputSchema.Properties
			_, reply := props["reply_to"]
			_, files := props[filesArg]
			_, uris := props[fileURIsArg]
			if !reply || !files || uris != fileTransfer || len(tl.Meta.FileParams) != 1 || tl.Meta.FileParams[0] != filesArg {
				t.Errorf("file transfer %v: %s has reply_to %v, files %v, file_uris %v, fileParams %v", fileTransfer, tl.Name, reply, files, uris, tl.Meta.FileParams)
			}
		}
		if seen != 2 {
			t.Fatalf("%d of send_email and create_draft listed", seen)
		}
	}
}
