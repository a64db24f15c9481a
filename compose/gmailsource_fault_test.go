package compose_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

// attachmentGets sits above a send's HTTP transport and counts the
// attachments.get requests; with answer, it hands compose another answer
// for each that Gmail answered 200: what Gmail would send if its bytes
// went wrong on the way. The original body stays open until compose
// closes the one it got, so a wire below still sees whether compose
// closed it.
type attachmentGets struct {
	base   http.RoundTripper
	answer func(r *http.Request, orig []byte) io.Reader
	n      atomic.Int32
}

func (a *attachmentGets) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.Contains(r.URL.Path, "/attachments/") {
		return a.base.RoundTrip(r)
	}
	a.n.Add(1)
	res, err := a.base.RoundTrip(r)
	if err != nil || res.StatusCode != http.StatusOK || a.answer == nil {
		return res, err
	}
	orig, err := io.ReadAll(res.Body)
	if err != nil {
		res.Body.Close()
		return nil, err
	}
	res.Body = &tamperedBody{Reader: a.answer(r, orig), orig: res.Body}
	res.ContentLength = -1
	res.Header.Del("Content-Length")
	return res, nil
}

type tamperedBody struct {
	io.Reader
	orig io.Closer
}

func (b *tamperedBody) Close() error { return b.orig.Close() }

// rewriteData answers {"size", "data"} with the attachment's bytes as
// change makes them, base64url as Gmail writes them: the answer agrees
// with itself, only not with the message's metadata. An answer it cannot
// read goes as it came, and the send then fails the test by succeeding.
func rewriteData(change func([]byte) []byte) func(*http.Request, []byte) io.Reader {
	return func(_ *http.Request, orig []byte) io.Reader {
		var ans struct {
			Data string `json:"data"`
		}
		if json.Unmarshal(orig, &ans) != nil {
			return bytes.NewReader(orig)
		}
		data, err := base64.URLEncoding.DecodeString(ans.Data)
		if err != nil {
			return bytes.NewReader(orig)
		}
		data = change(data)
		b, _ := json.Marshal(map[string]any{"size": len(data), "data": base64.URLEncoding.EncodeToString(data)})
		return bytes.NewReader(b)
	}
}

// notBase64 puts a byte that is no base64url in the middle of "data".
func notBase64(_ *http.Request, orig []byte) io.Reader {
	at := bytes.Index(orig, []byte(`"data":"`)) + len(`"data":"`)
	out := bytes.Clone(orig)
	out[at+(len(out)-at)/2] = '*'
	return bytes.NewReader(out)
}

// stallHalfWay sends the first half of the answer, then nothing until
// the request ends, as a stalled Gmail connection does.
func stallHalfWay(r *http.Request, orig []byte) io.Reader {
	return io.MultiReader(bytes.NewReader(orig[:len(orig)/2]), ctxReader{r.Context()})
}

type ctxReader struct{ ctx context.Context }

func (c ctxReader) Read([]byte) (int, error) {
	<-c.ctx.Done()
	return 0, c.ctx.Err()
}

// TestGmailAttachmentFailsWhileItStreams: a Gmail attachment goes after a
// Drive file that already filled an upload chunk, and its download from
// attachments.get goes wrong: its bytes are not what the message's
// metadata described, are not base64, stop coming, or Gmail refuses the
// download (the message is gone, the token lost its read scope or was
// revoked, a rate limit). Each is refused with its kind and a sentence
// that names the attachment and says what to do; nothing is sent (the
// upload Gmail holds is never finalized), every answer is closed and no
// goroutine of the send is left running.
func TestGmailAttachmentFailsWhileItStreams(t *testing.T) {
	const size = 300_000
	label := `Attachment 2 ("scans.bin")`
	for _, tc := range []struct {
		name   string
		faults []emulator.Fault                             // on attachments.get
		answer func(r *http.Request, orig []byte) io.Reader // in place of attachments.get's
		kind   string
		want   []string
	}{
		{name: "longer than its metadata said",
			answer: rewriteData(func(b []byte) []byte { return append(b, randomBytes(5000)...) }),
			kind:   "mail_corrupt",
			want:   []string{label + " did not arrive from Gmail as Gmail described it (", "more than the 0.3 MiB (300,000 bytes) Gmail said), so the message was abandoned. Nothing was sent. Try again."}},
		{name: "shorter than its metadata said",
			answer: rewriteData(func(b []byte) []byte { return b[:len(b)-5000] }),
			kind:   "mail_corrupt",
			want:   []string{label + " did not arrive intact from Gmail, so the message was abandoned. Nothing was sent. Try again."}},
		{name: "not base64",
			answer: notBase64,
			kind:   "mail_corrupt",
			want:   []string{label + " did not arrive intact from Gmail, so the message was abandoned. Nothing was sent. Try again."}},
		{name: "stalled half-way",
			answer: stallHalfWay,
			kind:   "mail_stalled",
			want:   []string{"Gmail stalled while sending attachment 2 (\"scans.bin\") (no data came for a long while), so the message was abandoned. Nothing was sent. Try again in a minute."}},
		// Gmail's own refusals of the download, after the metadata read
		// passed: the message deleted since, the read scope or the token
		// taken back.
		{name: "message gone",
			faults: []emulator.Fault{{Status: 404}},
			kind:   "unknown_message",
			want:   []string{label + ": no Gmail message with id MSG is visible to this Google account", "Nothing was sent. Find the message with search_mail and pass its id."}},
		{name: "no read scope",
			faults: []emulator.Fault{{Status: 403, Reason: "insufficientPermissions", Message: "Request had insufficient authentication scopes."}},
			kind:   "mail_scope",
			want:   []string{label + ": reading Gmail needs permission to read the user's mail", "Nothing was sent. Reconnect drivemail (sign in again) and allow reading mail."}},
		{name: "token revoked",
			faults: []emulator.Fault{{Status: 401}},
			kind:   "gmail_unauthorized",
			want:   []string{"Google no longer accepts this account's authorization (it expired or was revoked). Nothing was sent. Reconnect drivemail (sign in again)."}},
		{name: "rate limited",
			faults: []emulator.Fault{{Status: 429, Times: 3}}, // every try
			kind:   "mail_unavailable",
			want:   []string{label + ": Gmail is busy or unavailable right now, so message MSG could not be read. Nothing was sent. Try again in a minute."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The chunk is smaller than the Drive file, so Gmail holds bytes
			// of the message when the attachment fails.
			e := newEnv(t, compose.Config{ChunkSize: 256 << 10, GmailIdleTimeout: 200 * time.Millisecond})
			f, _ := e.putBytes("a.pdf", 400_000)
			id := e.deliver(user, "Scans", nil, inFile{"scans.bin", "application/octet-stream", randomBytes(size)})
			for _, fault := range tc.faults {
				fault.Method, fault.PathPrefix = "GET", "/gmail/v1/users/me/messages/"+id+"/attachments/"
				e.Inject(fault)
			}
			w := newWire(t, e.hc.Transport)
			gets := &attachmentGets{base: w, answer: tc.answer}
			before := e.Emu.Stats()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := e.svc.Send(ctx, &http.Client{Transport: gets}, compose.Request{To: []string{"zoe@example.org"}, Subject: "Scans", BodyText: "hi",
				Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}, gmailAtt(id, "scans.bin")}}, compose.Options{})
			r, ok := refusal.As(err)
			if !ok || string(r.Kind) != tc.kind {
				t.Fatalf("err = %v, want a %s refusal", err, tc.kind)
			}
			for _, want := range tc.want {
				if want = strings.ReplaceAll(want, "MSG", id); !strings.Contains(r.Text, want) {
					t.Errorf("refusal %q lacks %q", r.Text, want)
				}
			}
			after := e.Emu.Stats()
			outboxUnchanged(t, before, after)
			if tc.answer != nil && after.Paths[gmailChunks] == before.Paths[gmailChunks] {
				t.Error("no chunk reached Gmail before the attachment's bytes went wrong; the case needs Gmail to hold part of the message")
			}
			if gets.n.Load() == 0 {
				t.Error("the attachment was never downloaded")
			}
			w.allClosed()
			noGoroutinesLeft(t)
		})
	}
}
