package compose_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/handle"
)

// TestRetriedPassKeepsMessageID: a send whose first pass is restarted (a
// Drive cut before Gmail had bytes) delivers the message under the
// Message-ID it was validated with, the message_id the result reports: a
// retry is the same message, not a new one.
func TestRetriedPassKeepsMessageID(t *testing.T) { synctest.Test(t, testRetriedPassKeepsMessageID) }

func testRetriedPassKeepsMessageID(t *testing.T) {
	var logs bytes.Buffer
	e := newBubbleEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	f, _ := e.putBytes("report.pdf", 2<<20)
	// The first matching request is the metadata call; the second is the
	// first pass's download, cut half way.
	e.Inject(emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + f.ID, Times: 2, CutResponseAfter: ptr(int64(1 << 20))})
	res, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "cut once", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if !strings.Contains(logs.String(), "retrying send pass") {
		t.Fatalf("the first pass was not restarted:\n%s", logs.String())
	}
	if n := e.Emu.Stats().MessagesSent; n != 1 {
		t.Fatalf("%d messages sent, want 1", n)
	}
	h, _ := goParse(t, e.Message(user, res.ID))
	if got := h.Get("Message-Id"); res.MessageID == "" || got != res.MessageID {
		t.Errorf("the retried message carries Message-ID %q; the result says %q", got, res.MessageID)
	}
}
