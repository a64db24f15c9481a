package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/pick"
)

const (
	scopeDriveFile = "https://www.googleapis.com/auth/drive.file"
	scopeSend      = "https://www.googleapis.com/auth/gmail.send"
	pickURL        = "https://mail.example.com/pick/p1.0011aabbccdd.sealed"
)

// fakePicks hands out one link and counts them.
type fakePicks struct{ links int }

func (f *fakePicks) Link(*account.Account) (pick.Link, error) {
	f.links++
	return pick.Link{URL: pickURL, ExpiresAt: time.Date(2026, 5, 1, 9, 45, 0, 0, time.UTC), MaxFiles: compose.MaxFiles}, nil
}

// fileHarness is the tools of a file-mode deployment for a user who
// granted gmail.send and drive.file (and the scopes extra adds).
func fileHarness(t *testing.T, extra ...string) (*harness, *fakePicks) {
	p := &fakePicks{}
	h := newHarness(t, func(d *Deps) { d.Picks = p })
	h.user.GoogleScopes = append([]string{scopeSend, scopeDriveFile}, extra...)
	return h, p
}

// TestDrivePickListedInFileModeOnly: file mode lists drive_pick and a
// drive_search that says what it searches; readonly mode neither.
func TestDrivePickListedInFileModeOnly(t *testing.T) {
	h, _ := fileHarness(t)
	if names := h.toolNames(); !slices.Contains(names, "drive_pick") {
		t.Errorf("file mode lists %v, want drive_pick", names)
	}
	if names := newHarness(t, nil).toolNames(); slices.Contains(names, "drive_pick") {
		t.Errorf("readonly mode lists %v", names)
	}
	var list struct {
		Tools []struct{ Name, Description string } `json:"tools"`
	}
	if err := json.Unmarshal(h.rpc("tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if tool.Name == "drive_search" && !strings.Contains(tool.Description, "handed drivemail") {
			t.Errorf("file mode's drive_search says %q", tool.Description)
		}
	}
}

func TestDrivePick(t *testing.T) {
	h, p := fileHarness(t)
	res := h.call("drive_pick", map[string]any{})
	if res.IsError {
		t.Fatalf("refused: %s", res.text())
	}
	var out PickResult
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	if out.PickURL != pickURL || out.MaxFiles != compose.MaxFiles || out.ExpiresAt.IsZero() || p.links != 1 {
		t.Errorf("structured %+v after %d links", out, p.links)
	}
	for _, want := range []string{"Give the user this link", pickURL, "until 09:45 UTC", "call drive_search", "attach the files by id"} {
		if !strings.Contains(res.text(), want) {
			t.Errorf("text %q lacks %q", res.text(), want)
		}
	}
	h.mustRefuse("drive_pick", map[string]any{"files": 2}, `"files"`)
}

// TestDrivePickNeedsDriveFile: a user who did not grant drive.file gets
// the way to grant it, and no link.
func TestDrivePickNeedsDriveFile(t *testing.T) {
	h, p := fileHarness(t)
	h.user.GoogleScopes = []string{scopeSend}
	h.mustRefuse("drive_pick", map[string]any{}, "drive.file", "reconnect drivemail")
	if p.links != 0 {
		t.Errorf("%d links made for a user who cannot pick", p.links)
	}
}

// TestNothingFoundOffersThePickLink: in file mode an empty search says
// how to add files, with the link; not when a next page may hold some,
// not in readonly mode, not for a user who may read their whole Drive.
func TestNothingFoundOffersThePickLink(t *testing.T) {
	h, _ := fileHarness(t)
	res := h.call("drive_search", map[string]any{"query": "budget"})
	var out SearchResult
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	if res.IsError || out.PickURL != pickURL || !strings.Contains(res.text(), "give the user this link to choose them in Google Drive") ||
		!strings.Contains(res.text(), pickURL) {
		t.Fatalf("empty search in file mode: %s %+v", res.text(), out)
	}

	h.drive.page = drive.Page{NextPageToken: "more"}
	if res := h.call("drive_search", map[string]any{"query": "budget"}); strings.Contains(res.text(), pickURL) {
		t.Errorf("an empty page with more to come offers a link: %s", res.text())
	}
	h.drive.page = drive.Page{Files: sampleFiles()[:1]}
	if res := h.call("drive_search", map[string]any{"query": "q3"}); strings.Contains(res.text(), pickURL) {
		t.Errorf("a search that found a file offers a link: %s", res.text())
	}
	h.drive.page = drive.Page{}
	for name, h := range map[string]*harness{"readonly mode": newHarness(t, nil), "a drive.readonly grant": func() *harness {
		h, _ := fileHarness(t, "https://www.googleapis.com/auth/drive.readonly")
		return h
	}()} {
		if res := h.call("drive_search", map[string]any{"query": "budget"}); strings.Contains(res.text(), "/pick/") {
			t.Errorf("%s: an empty search offers a link: %s", name, res.text())
		}
	}
}

// TestUnknownFileOffersThePickLink: an id drivemail cannot see gets one
// more sentence with the link, in drive_get_file and in send_email, and
// a refusal keeps its kind and what it says of the message.
func TestUnknownFileOffersThePickLink(t *testing.T) {
	h, _ := fileHarness(t)
	h.drive.err = &drive.Error{Op: "files.get", Err: drive.ErrNotFound}
	res := h.mustRefuse("drive_get_file", map[string]any{"file_id": id33}, "No Drive file with id", "sees only the files the user handed it", pickURL)
	if strings.Count(res.text(), pickURL) != 1 {
		t.Errorf("the link appears %d times: %s", strings.Count(res.text(), pickURL), res.text())
	}

	h.mail.err = refusal.New("unknown_file", "Attachment 1: no Drive file with id %s is visible to this Google account.", id33)
	res = h.mustRefuse("send_email", map[string]any{"to": "ana@example.com", "subject": "Q3", "attachments": []string{id33}},
		"Attachment 1: no Drive file", pickURL)
	if !strings.HasPrefix(res.text(), "Attachment 1:") {
		t.Errorf("the refusal's own sentence must come first: %s", res.text())
	}

	plain := newHarness(t, nil)
	plain.drive.err = h.drive.err
	if res := plain.mustRefuse("drive_get_file", map[string]any{"file_id": id33}, "No Drive file"); strings.Contains(res.text(), "/pick/") {
		t.Errorf("readonly mode offers a link: %s", res.text())
	}
}

// TestFileModeSnapshots: the tools that differ in file mode, as
// tools/list returns them there. Rewrite with: go test ./tools -run
// TestFileModeSnapshots -update
func TestFileModeSnapshots(t *testing.T) {
	h, _ := fileHarness(t)
	if written := checkVariantSnapshots(t, h, "drive-file", "TestFileModeSnapshots"); !slices.Equal(written, []string{"drive_pick", "drive_search"}) {
		t.Errorf("the tools that differ in file mode are %v; want drive_pick and drive_search", written)
	}
}
