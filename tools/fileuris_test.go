package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/handle"
)

const transferURI = "mcp-file://dm.example.com/transfer/k3Jx9_Qw-2bN7vLpZs0aYe"

// TestFileURIsWithFileTransfer: with --file-transfer, send_email takes
// file-transfer URIs and data: URIs in file_uris, after the other entries.
func TestFileURIsWithFileTransfer(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.FileTransfer = true })
	res := h.call("send_email", `{"to":"ana@example.com","subject":"s","body_text":"x","attachments":"`+id33+`",
		"file_uris":["`+transferURI+`","data:text/plain;name=tiny.txt;base64,SGVsbG8=","data:image/png;base64,iVBORw0KGgo="]}`)
	if res.IsError {
		t.Fatalf("refused: %s", res.text())
	}
	want := []compose.Attachment{
		{Source: compose.DriveFile{Handle: handle.MustParse(id33)}},
		{Source: compose.DriveFile{Handle: handle.Transfer{Host: "dm.example.com", ID: "k3Jx9_Qw-2bN7vLpZs0aYe"}}},
		{Name: "tiny.txt", Source: compose.Content{Encoding: compose.DataURI, Data: "data:text/plain;name=tiny.txt;base64,SGVsbG8="}},
		{Name: "attachment", Source: compose.Content{Encoding: compose.DataURI, Data: "data:image/png;base64,iVBORw0KGgo="}},
	}
	if !reflect.DeepEqual(h.mail.req.Attachments, want) {
		t.Fatalf("attachments = %+v\nwant %+v", h.mail.req.Attachments, want)
	}
	h.mustRefuse("send_email", `{"to":"a@example.com","subject":"s","file_uris":["report.pdf"]}`,
		`Attachment 1 ("file_uris" entry 1)`, "files/prepareUpload")
}

// TestFileURIsOnlyWithFileTransfer: without the flag the argument is
// neither offered nor read, and tools/list is what it was.
func TestFileURIsOnlyWithFileTransfer(t *testing.T) {
	off := newHarness(t, nil)
	off.mustRefuse("send_email", `{"to":"a@example.com","subject":"s","file_uris":["`+transferURI+`"]}`, `unknown field "file_uris"`)
	on := newHarness(t, func(d *Deps) { d.FileTransfer = true })
	for name, h := range map[string]*harness{"off": off, "on": on} {
		var list struct {
			Tools []struct {
				Name        string `json:"name"`
				InputSchema struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(h.rpc("tools/list", map[string]any{}), &list); err != nil {
			t.Fatal(err)
		}
		for _, tl := range list.Tools {
			if tl.Name != "send_email" && tl.Name != "create_draft" {
				continue
			}
			p, has := tl.InputSchema.Properties[fileURIsArg]
			if has != (name == "on") {
				t.Fatalf("%s: %s has file_uris = %v", name, tl.Name, has)
			}
			if !has {
				continue
			}
			var prop struct {
				Items struct {
					Type    string `json:"type"`
					MCPFile struct {
						MaxSize       int64    `json:"maxSize"`
						TransferModes []string `json:"transferModes"`
					} `json:"x-mcp-file"`
				} `json:"items"`
			}
			if err := json.Unmarshal(p, &prop); err != nil {
				t.Fatal(err)
			}
			if prop.Items.Type != "string" || prop.Items.MCPFile.MaxSize != compose.MaxAttachmentBytes || !reflect.DeepEqual(prop.Items.MCPFile.TransferModes, []string{"inline", "upload"}) {
				t.Errorf("%s: file_uris items = %+v", tl.Name, prop.Items)
			}
		}
	}
}

func TestInputFilesSidecar(t *testing.T) {
	side := InputFiles()
	for _, tool := range []string{"send_email", "create_draft"} {
		var m map[string]struct {
			MaxFileSize int64 `json:"maxFileSize"`
		}
		if err := json.Unmarshal(side[tool], &m); err != nil || m[fileURIsArg].MaxFileSize != compose.MaxAttachmentBytes {
			t.Errorf("%s: sidecar %s (%v)", tool, side[tool], err)
		}
	}
}

// TestFileURIsOfAnotherShape: file_uris that is neither a string nor a
// list of them is refused with what it takes.
func TestFileURIsOfAnotherShape(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.FileTransfer = true })
	for _, v := range []string{`5`, `{"uri":"mcp-file://h/transfer/k3Jx9_Qw-2bN7vLpZs0aYe"}`, `[5]`} {
		h.mustRefuse("send_email", `{"to":"ana@example.com","subject":"s","body_text":"x","file_uris":`+v+`}`, `"file_uris" must be a list of file URIs`)
	}
	if h.mail.called != 0 {
		t.Fatal("Mail.Send was called")
	}
}
