package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"
)

// deliver puts a message from dana into the demo user's inbox through
// the emulator's control route, as mail from another sender arrives.
func (r running) deliver(t *testing.T, subject, file string, data []byte) {
	t.Helper()
	enc := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	fmt.Fprintf(&b, "From: Dana Reyes <dana@example.org>\r\nTo: demo@example.com\r\nSubject: %s\r\nMessage-ID: <%s@example.org>\r\n", subject, strings.ReplaceAll(subject, " ", "."))
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nThe signed copy is attached.\r\n")
	fmt.Fprintf(&b, "--B\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=%q\r\nContent-Transfer-Encoding: base64\r\n\r\n", file)
	for len(enc) > 76 {
		b.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	b.WriteString(enc + "\r\n--B--\r\n")
	resp, err := http.Post(r.emulator+"/_emulator/gmail/inbox?user=demo@example.com", "message/rfc822", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("deliver: %s", resp.Status)
	}
}

// reader is gmail/v1 against the emulated Gmail as the demo user, with
// a token minted to read.
func (r running) reader(t *testing.T) *gmail.Service {
	t.Helper()
	resp, err := http.Post(r.emulator+"/_emulator/users", "application/json",
		strings.NewReader(`{"email":"demo@example.com","scopes":["https://www.googleapis.com/auth/gmail.readonly"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("emulator read token: %v", err)
	}
	svc, err := gmail.NewService(context.Background(), option.WithEndpoint(r.emulator+"/"),
		option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok.AccessToken})))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// thread reads a thread from the emulated Gmail as the demo user.
func (r running) thread(t *testing.T, id string) *gmail.Thread {
	t.Helper()
	th, err := r.reader(t).Users.Threads.Get("me", id).Format("metadata").Do()
	if err != nil {
		t.Fatalf("threads.get %s: %v", id, err)
	}
	return th
}

type mailSearch struct {
	Messages []struct {
		ID          string `json:"id"`
		ThreadID    string `json:"thread_id"`
		From        string `json:"from"`
		Subject     string `json:"subject"`
		Attachments []struct {
			Name string `json:"name"`
			Size int64  `json:"size"`
		} `json:"attachments"`
	} `json:"messages"`
}

// TestMailEndToEnd: with the go-sdk client against serve --demo, a model
// finds a message, replies in its thread, forwards it with its
// attachment byte for byte, and saves the attachment to Drive and sends
// the saved file by its handle.
func TestMailEndToEnd(t *testing.T) {
	srv := startDemo(t)
	contract := make([]byte, 300_001)
	rand.Read(contract)
	srv.deliver(t, "Signed contract", "contract.pdf", contract)
	cs := srv.session(t, "2025-11-25", nil)

	var found mailSearch
	res := call(t, cs, &sdk.CallToolParams{Name: "search_mail", Arguments: map[string]any{"query": "from:dana has:attachment"}}, &found)
	if len(found.Messages) != 1 || found.Messages[0].Subject != "Signed contract" || len(found.Messages[0].Attachments) != 1 ||
		found.Messages[0].Attachments[0].Size != int64(len(contract)) || !strings.Contains(text(res), "contract.pdf") {
		t.Fatalf("search_mail: %+v\n%s", found, text(res))
	}
	orig := found.Messages[0]

	// A reply joins the conversation: the emulator applies Gmail's three conditions.
	var reply sendResult
	call(t, cs, &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{"reply_to": orig.ID, "body_text": "Thanks, received."}}, &reply)
	th := srv.thread(t, orig.ThreadID)
	if reply.ThreadID != orig.ThreadID || len(th.Messages) != 2 || th.Messages[1].Id != reply.ID {
		t.Errorf("reply %s in thread %s; the thread holds %d messages", reply.ID, reply.ThreadID, len(th.Messages))
	}
	if m := srv.readMail(t, reply.ID); m.subject != "Re: Signed contract" || m.inReplyTo != "<Signed.contract@example.org>" || !strings.Contains(m.to, "dana@example.org") {
		t.Errorf("reply headers %+v", m)
	}

	// A forward carries the attachment, byte for byte.
	var fwd sendResult
	call(t, cs, &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{"forward": orig.ID, "to": "legal@example.org", "body_text": "For the file."}}, &fwd)
	if m := srv.readMail(t, fwd.ID); m.subject != "Fwd: Signed contract" || !bytes.Equal(m.attachments["contract.pdf"], contract) ||
		!strings.Contains(m.text, "---------- Forwarded message ---------") {
		t.Errorf("forward: subject %q, attachment %d bytes (want %d)", m.subject, len(m.attachments["contract.pdf"]), len(contract))
	}

	// Saved to Drive, then attached by the handle save_to_drive returned.
	var saved struct {
		FileID string `json:"file_id"`
		Handle string `json:"handle"`
		Size   int64  `json:"size"`
	}
	call(t, cs, &sdk.CallToolParams{Name: "save_to_drive", Arguments: map[string]any{"message_id": orig.ID, "attachment": "contract.pdf"}}, &saved)
	if saved.Size != int64(len(contract)) || !strings.HasPrefix(saved.Handle, "mcp-file://") {
		t.Fatalf("save_to_drive: %+v", saved)
	}
	var again sendResult
	call(t, cs, &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{
		"to": "archive@example.org", "subject": "Contract", "body_text": "From Drive.", "attachments": saved.Handle}}, &again)
	if m := srv.readMail(t, again.ID); !bytes.Equal(m.attachments["contract.pdf"], contract) {
		t.Errorf("the saved file sent by its handle differs (%d bytes)", len(m.attachments["contract.pdf"]))
	}

	// A message id that is no one's reads like another account's.
	r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "save_to_drive", Arguments: map[string]any{"message_id": "18f0000000000000", "attachment": "contract.pdf"}})
	if err != nil || !r.IsError || !strings.Contains(text(r), "another account's") {
		t.Errorf("unknown message: %v %s", err, text(r))
	}
}
