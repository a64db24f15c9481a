package compose_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/identity"
)

// TestAuditLineCountsAndNeverContents checks the one "message sent" line a
// send logs: who, how many recipients and files, how many bytes, which
// Gmail message; never an address, the subject, a body or a file name.
func TestAuditLineCountsAndNeverContents(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	f, _ := e.putBytes("Secret plans.pdf", 3000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	acct := e.as(identity.User{ID: "user-42", Email: user}, nil)
	res, err := e.svc.Send(ctx, acct, compose.Request{
		To: []string{"carol@example.com", "dan@example.com"}, Cc: []string{"erin@example.com"}, Bcc: []string{"frank@example.com"},
		Subject: "Takeover strategy", BodyText: "Confidential body text",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}},
	}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, `msg="message sent"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("want one audit line, got %d:\n%s", len(lines), logs.String())
	}
	line := lines[0]
	for _, want := range []string{"user=user-42", "recipients=4", "attached=1", "attached_bytes=3000", "message_id=" + res.ID, "inline=0"} {
		if !strings.Contains(line, want) {
			t.Errorf("audit line lacks %s: %s", want, line)
		}
	}
	for _, secret := range []string{"example.com", "Takeover", "Confidential", "Secret plans", f.ID} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the send's logs show %q: %s", secret, logs.String())
		}
	}
}

// TestRefusalLogNamesNoAddress: a refused send logs why in kind (the field
// at fault, Google's status), never the address or subject it quoted.
func TestRefusalLogNamesNoAddress(t *testing.T) {
	var logs bytes.Buffer
	e := newEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx, acct := context.Background(), e.as(identity.User{ID: "user-42", Email: user}, nil)
	exe, _ := e.putBytes("Secret tool.exe", 10)
	for _, req := range []compose.Request{
		{To: []string{"carol-secret@exa mple.com"}, Subject: "Hidden subject", BodyText: "x"},
		{To: []string{"carol@example.com"}, Subject: "Hidden subject", BodyText: "x", Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse("1AbCdEfGhIjKlMnOpQrStUvWxYz0123456789")}}}},
		{To: []string{"carol@example.com"}, Subject: "Hidden subject", BodyText: "x", Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(exe.ID)}}}},
	} {
		_, err := e.svc.Send(ctx, acct, req, compose.Options{})
		if err == nil {
			t.Fatal("want a refusal")
		}
	}
	out := logs.String()
	if strings.Count(out, `msg="send refused"`) != 3 {
		t.Fatalf("want three refusal lines:\n%s", out)
	}
	for _, secret := range []string{"carol", "Hidden subject", "Secret tool"} {
		if strings.Contains(out, secret) {
			t.Errorf("a refusal's log shows %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, `cause="invalid to"`) || !strings.Contains(out, "notFound") {
		t.Errorf("the refusal lines should say what kind of cause it was:\n%s", out)
	}
}

// TestRetryLogNamesNoFile: the line logged when a Drive failure restarts
// the pass says why in kind, never the file name its error quotes.
func TestRetryLogNamesNoFile(t *testing.T) { synctest.Test(t, testRetryLogNamesNoFile) }

func testRetryLogNamesNoFile(t *testing.T) {
	var logs bytes.Buffer
	e := newBubbleEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	f, b := e.putBytes("Secret merger.pdf", 2<<20)
	e.Inject(emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + f.ID, Times: 2, CutResponseAfter: ptr(int64(1 << 20))})
	e.sendFileOnce("cut once", f, b)
	if !strings.Contains(logs.String(), "retrying send pass") {
		t.Fatalf("no retry line logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "Secret merger") {
		t.Errorf("the logs show the file name:\n%s", logs.String())
	}
}
