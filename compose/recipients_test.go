package compose_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/logtest"
)

// TestTooManyRecipientsIsLoggedAsSuch: 100 recipients send; 101 are
// refused, nothing sent, and the log line names the refusal by what was
// wrong (too_many_recipients), not as a bad address.
func TestTooManyRecipientsIsLoggedAsSuch(t *testing.T) {
	logs := &logtest.Buffer{}
	e := newEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ctx, acct := context.Background(), e.as(identity.User{ID: "user-42", Email: user}, nil)
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("r%d@example.com", i)
		}
		return out
	}
	req := compose.Request{To: many(60), Cc: many(30), Bcc: many(10), Subject: "s", BodyText: "x"}
	if _, err := e.svc.Send(ctx, acct, req, compose.Options{}); err != nil {
		t.Fatalf("100 recipients: %v", err)
	}
	req.Bcc = many(11)
	_, err := e.svc.Send(ctx, acct, req, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "101 recipients") {
		t.Fatalf("101 recipients: %v", err)
	}
	if n := e.Emu.Stats().MessagesSent; n != 1 {
		t.Errorf("%d messages sent, want only the one with 100 recipients", n)
	}
	out := logs.String()
	if !strings.Contains(out, "refusal=too_many_recipients") || strings.Contains(out, "invalid_address") {
		t.Errorf("the refusal is not logged as too_many_recipients:\n%s", out)
	}
}
