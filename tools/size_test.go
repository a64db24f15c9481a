package tools

import (
	"encoding/json"
	"testing"
)

// toolsListBudget is the most the default tools/list may weigh on the
// wire: every conversation carries it (about four bytes to a model
// token). It holds with the chat-file parameters (files) and
// save_to_drive, which every user sees, and with --file-transfer's
// file_uris and inputFiles sidecars: room was made by saying each thing
// once, in the tool's description or in its argument's, not in both,
// and not what the schema says already. A link's share option and its
// access in the result (about 350 bytes over send_email and create_draft,
// the option left to its name and enum: a refusal names it when needed)
// raised it by 100; the From every send and draft result names, and a
// draft's link (about 50 bytes over both results, less what
// create_draft's description gave back), by 30.
const toolsListBudget = 12_130

// mailToolsListBudget is what tools/list may weigh for a user who reads
// mail: the default list, search_mail, and the mail arguments of
// send_email, create_draft and save_to_drive (from and signature among
// them).
const mailToolsListBudget = 17_000

// sendDraftBudget is what send_draft may add to either list, on a server
// started with --drafts, the only one that lists it.
const sendDraftBudget = 900

// fileModeToolsListExtra is what --drive-scope file may add to the
// default tools/list: drive_pick, and drive_search's longer description
// with its pick_url.
const fileModeToolsListExtra = 1_500

// TestToolsListSize prints what tools/list weighs, as a client receives
// it, in each configuration that changes it, and fails above the budget.
// Run: go test ./tools -run TestToolsListSize -v
func TestToolsListSize(t *testing.T) {
	for _, tt := range []struct {
		name                              string
		readMail, transfer, drafts, picks bool
		budget                            int
	}{
		{"default", false, false, false, false, toolsListBudget},
		{"file transfer", false, true, false, false, toolsListBudget},
		{"drafts and file transfer", false, true, true, false, toolsListBudget + sendDraftBudget},
		{"read mail", true, false, false, false, mailToolsListBudget},
		{"read mail and file transfer", true, true, false, false, mailToolsListBudget},
		{"read mail, drafts and file transfer", true, true, true, false, mailToolsListBudget + sendDraftBudget},
		{"drive scope file", false, false, false, true, toolsListBudget + fileModeToolsListExtra},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(d *Deps) {
				d.ReadMailEnabled, d.MailReader, d.Saver, d.FileTransfer = tt.readMail, &fakeMailReader{}, &fakeSaver{}, tt.transfer
				d.DraftsEnabled = tt.drafts
				if tt.picks {
					d.Picks = &fakePicks{}
				}
			})
			if tt.readMail {
				h.user.GoogleScopes = append(h.user.GoogleScopes, scopeReadonly)
			}
			list := h.rpc("tools/list", map[string]any{})
			if tt.transfer {
				list = withInputFiles(t, list)
			}
			n := len(list)
			t.Logf("tools/list (%s): %d bytes (budget %d), about %d tokens", tt.name, n, tt.budget, n/4)
			if n > tt.budget {
				t.Errorf("tools/list (%s) is %d bytes, over its %d-byte budget", tt.name, n, tt.budget)
			}
		})
	}
}

// withInputFiles adds the inputFiles sidecars to a tools/list result the
// way the server does with --file-transfer (server/filetransfer.go), so
// the size counted is the one on the wire.
func withInputFiles(t *testing.T, result json.RawMessage) json.RawMessage {
	t.Helper()
	var r map[string]json.RawMessage
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(r["tools"], &tools); err != nil {
		t.Fatal(err)
	}
	sidecars, added := InputFiles(), 0
	for _, tl := range tools {
		var name string
		if err := json.Unmarshal(tl["name"], &name); err != nil {
			t.Fatal(err)
		}
		if s, ok := sidecars[name]; ok {
			tl["inputFiles"] = s
			added++
		}
	}
	if added != len(sidecars) {
		t.Fatalf("%d of %d inputFiles sidecars found a tool", added, len(sidecars))
	}
	var err error
	if r["tools"], err = json.Marshal(tools); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
