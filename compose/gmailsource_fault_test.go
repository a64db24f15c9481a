package compose_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/identity"
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
// revoked, a rate limit that outlasts the retries). Each is refused with
// its kind and a sentence that names the attachment and says what to do;
// nothing is sent (the upload Gmail holds is never finalized), every
// answer is closed and no goroutine of the send is left running. Only a
// refused download is tried again, never one whose bytes began to flow.
func TestGmailAttachmentFailsWhileItStreams(t *testing.T) {
	const size = 300_000
	label := `Attachment 2 ("scans.bin")`
	for _, tc := range []struct {
		name   string
		faults []emulator.Fault                             // on attachments.get
		answer func(r *http.Request, orig []byte) io.Reader // in place of attachments.get's
		kind   string
		want   []string
		gets   int32 // attachments.get requests; 0: one
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
		{name: "rate limited (429), every try",
			faults: []emulator.Fault{{Status: 429, Times: 3}},
			kind:   "mail_unavailable",
			want:   []string{label + ": Gmail is busy or unavailable right now, so message MSG could not be read. Nothing was sent. Try again in a minute."},
			gets:   3},
		{name: "project rate limit (403 rateLimitExceeded), every try",
			faults: []emulator.Fault{{Status: 403, Reason: "rateLimitExceeded", Message: "Rate Limit Exceeded", Times: 3}},
			kind:   "mail_unavailable",
			want:   []string{label + ": Gmail is busy or unavailable right now, so message MSG could not be read. Nothing was sent. Try again in a minute."},
			gets:   3},
	} {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			// The chunk is smaller than the Drive file, so Gmail holds bytes
			// of the message when the attachment fails.
			e := newBubbleEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10, GmailIdleTimeout: 200 * time.Millisecond})
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
			_, err := e.svc.Send(ctx, e.as(identity.User{}, &http.Client{Transport: gets}), compose.Request{To: []string{"zoe@example.org"}, Subject: "Scans", BodyText: "hi",
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
			wantGets := max(tc.gets, 1)
			if got := gets.n.Load(); got != wantGets {
				t.Errorf("attachments.get asked %d times, want %d", got, wantGets)
			}
			w.allClosed()
			noGoroutinesLeft(t)
		}))
	}
}

// gmailReads sits above a send's HTTP transport and notes when each
// Gmail read (messages.get and attachments.get) was asked, Gmail's
// refusals included.
type gmailReads struct {
	base http.RoundTripper
	mu   sync.Mutex
	at   map[string][]time.Time // "messages.get" or "attachments.get"
}

func (g *gmailReads) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/gmail/v1/users/me/messages/") {
		op := "messages.get"
		if strings.Contains(r.URL.Path, "/attachments/") {
			op = "attachments.get"
		}
		g.mu.Lock()
		g.at[op] = append(g.at[op], time.Now())
		g.mu.Unlock()
	}
	return g.base.RoundTrip(r)
}

func (g *gmailReads) times(op string) []time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.at[op])
}

// TestGmailReadRateLimitRetried: Gmail's per-minute rate limits on the
// reads of a send (the Gmail attachment's messages.get and
// attachments.get, the forwarded message's messages.get), a plain 429 or
// a 403 rateLimitExceeded, are tried again with backoff, as Google's
// guide says, and the message goes once the limit clears; a read Gmail
// says to retry only at a time past the retries' bound, or refused for
// the project's daily quota, which no retry lifts, is refused at once.
func TestGmailReadRateLimitRetried(t *testing.T) {
	const (
		msgGet = "messages.get"
		attGet = "attachments.get"
	)
	for _, tc := range []struct {
		name    string
		forward bool   // the message is forwarded, not its attachment attached
		op      string // the read the fault answers
		fault   emulator.Fault
		// retryIn, when set, is when Gmail says to retry, counted from
		// the fault's injection.
		retryIn time.Duration
		sent    bool
		tries   int
		kind    string // the refusal's, when not sent
	}{
		{name: "429 on attachments.get, once", op: attGet, fault: emulator.Fault{Status: 429}, sent: true, tries: 2},
		{name: "429 on attachments.get, twice", op: attGet, fault: emulator.Fault{Status: 429, Times: 2}, sent: true, tries: 3},
		{name: "403 rateLimitExceeded on attachments.get, once", op: attGet,
			fault: emulator.Fault{Status: 403, Reason: "rateLimitExceeded", Message: "Rate Limit Exceeded"}, sent: true, tries: 2},
		{name: "429 on the attachment's messages.get, once", op: msgGet, fault: emulator.Fault{Status: 429}, sent: true, tries: 2},
		{name: "429 on the forwarded message's messages.get, once", forward: true, op: msgGet, fault: emulator.Fault{Status: 429}, sent: true, tries: 2},
		{name: "429 that says retry after half a second", op: attGet, fault: emulator.Fault{Status: 429}, retryIn: 500 * time.Millisecond, sent: true, tries: 2},
		{name: "429 that says retry after an hour", op: attGet, fault: emulator.Fault{Status: 429}, retryIn: time.Hour, tries: 1, kind: "mail_unavailable"},
		{name: "403 dailyLimitExceeded on attachments.get", op: attGet,
			fault: emulator.Fault{Status: 403, Reason: "dailyLimitExceeded", Message: "Daily Limit Exceeded"}, tries: 1, kind: "gmail_daily_quota"},
		{name: "403 dailyLimitExceeded on messages.get", op: msgGet,
			fault: emulator.Fault{Status: 403, Reason: "dailyLimitExceeded", Message: "Daily Limit Exceeded"}, tries: 1, kind: "gmail_daily_quota"},
		{name: "403 dailyLimitExceeded on the forwarded message's messages.get", forward: true, op: msgGet,
			fault: emulator.Fault{Status: 403, Reason: "dailyLimitExceeded", Message: "Daily Limit Exceeded"}, tries: 1, kind: "gmail_daily_quota"},
		{name: "403 forbidden on messages.get", op: msgGet,
			fault: emulator.Fault{Status: 403, Reason: "forbidden", Message: "Forbidden"}, tries: 1, kind: "gmail_forbidden"},
	} {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			e := newBubbleEnv(t, compose.Config{})
			data := randomBytes(100_000)
			id := e.deliver(user, "Scans", nil, inFile{"scans.bin", "application/octet-stream", data})
			req := compose.Request{To: []string{"zoe@example.org"}, Subject: "Scans", BodyText: "hi", Attachments: []compose.Attachment{gmailAtt(id, "scans.bin")}}
			if tc.forward {
				req = compose.Request{To: []string{"zoe@example.org"}, Forward: msgRef(id), BodyText: "hi"}
			}
			// The first request under the message's path is its messages.get.
			tc.fault.Method, tc.fault.PathPrefix = "GET", "/gmail/v1/users/me/messages/"+id
			if tc.op == attGet {
				tc.fault.PathPrefix += "/attachments/"
			}
			var after time.Time // the second try is not before it
			if tc.retryIn > 0 {
				after = time.Now().Add(tc.retryIn).UTC().Truncate(time.Millisecond)
				tc.fault.Message = "User-rate limit exceeded.  Retry after " + after.Format("2006-01-02T15:04:05.000Z")
			}
			e.Inject(tc.fault)
			reads := &gmailReads{base: e.hc.Transport, at: map[string][]time.Time{}}
			before := e.Emu.Stats()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := e.svc.Send(ctx, e.as(identity.User{}, &http.Client{Transport: reads}), req, compose.Options{})
			if tc.sent {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
				_, root := goParse(t, e.Message(user, res.ID))
				if l := root.leaves(); len(l) < 2 || !bytes.Equal(l[len(l)-1].Body, data) {
					t.Error("the attachment sent differs from the original's")
				}
			} else {
				if err == nil {
					t.Fatal("sent; want the read refused")
				}
				if k := refusal.KindOf(err); string(k) != tc.kind {
					t.Errorf("refusal kind %q (%v); want %q", k, err, tc.kind)
				}
				outboxUnchanged(t, before, e.Emu.Stats())
			}
			at := reads.times(tc.op)
			if len(at) != tc.tries {
				t.Errorf("%s asked %d times, want %d", tc.op, len(at), tc.tries)
			}
			if len(at) >= 2 && at[1].Before(after) {
				t.Errorf("tried again at %s, before the %s Gmail named", at[1].Format("15:04:05.000"), after.Format("15:04:05.000"))
			}
		}))
	}
}
