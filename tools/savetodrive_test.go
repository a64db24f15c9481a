package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/drivemail/drivemail/upload"
)

type fakeClientFiles struct {
	req    upload.SaveRequest
	called int
}

func (f *fakeClientFiles) SaveClientFile(ctx context.Context, req upload.SaveRequest) (upload.Result, error) {
	f.called++
	f.req = req
	return upload.Result{FileID: id33, Name: "Q3.pdf", MimeType: "application/pdf", Size: 2048, Handle: "mcp-file://dm.example.com/" + id33}, nil
}

// TestSaveToDrive: the file object goes to the service as the client gave
// it, name overriding the client's file_name; the answer is the Drive id
// to attach.
func TestSaveToDrive(t *testing.T) {
	cf := &fakeClientFiles{}
	h := newHarness(t, func(d *Deps) { d.ClientFiles = cf })
	res := h.call("save_to_drive", `{"file":{"download_url":"`+chatURL+`","file_id":"file-1","mime_type":"application/pdf","file_name":"scan.pdf"},"name":"Q3.pdf","folder_id":"`+id33+`"}`)
	if res.IsError {
		t.Fatalf("refused: %s", res.text())
	}
	want := upload.SaveRequest{URL: chatURL, MimeType: "application/pdf", Name: "Q3.pdf", FolderID: id33}
	if cf.req != want {
		t.Fatalf("request = %+v, want %+v", cf.req, want)
	}
	var out saveResult
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.FileID != id33 || out.Size != 2048 {
		t.Fatalf("structuredContent = %s", res.StructuredContent)
	}
}

func TestSaveToDriveRefusals(t *testing.T) {
	for args, wants := range map[string][]string{
		`{}`:                     {`"file" is required`},
		`{"file":"chat_upload"}`: {`"file" is "chat_upload"`, "did not hand over the file"},
		`{"file":{"download_url":"http://x.example/f","file_id":"f"}}`:                      {"not an https URL"},
		`{"file":{"download_url":"` + chatURL + `","file_id":"f"},"folder_id":"My Folder"}`: {`"folder_id": "My Folder" is not a Drive file id`},
	} {
		cf := &fakeClientFiles{}
		h := newHarness(t, func(d *Deps) { d.ClientFiles = cf })
		h.mustRefuse("save_to_drive", args, wants...)
		if cf.called != 0 {
			t.Errorf("%s: the service was called", args)
		}
	}
	h := newHarness(t, nil)
	h.mustRefuse("save_to_drive", `{"file":{"download_url":"`+chatURL+`","file_id":"f"}}`, "does not save files from the conversation")
}
