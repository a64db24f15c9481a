package gmail_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/memnet"
)

const (
	user  = "ana@example.com"
	chunk = 256 << 10
)

// env is an emulator and ana's Gmail client of it.
type env struct {
	*emutest.Env
	gc *gmail.Client
}

// newEnv starts an emulator; ana's client has scopes (send, compose and
// readonly by default).
func newEnv(t *testing.T, scopes ...string) *env {
	t.Helper()
	return startEnv(t, emutest.Start(t), scopes...)
}

// newBubbleEnv is newEnv for a test inside a testing/synctest bubble
// (call it there): the emulator on an in-memory network, so the bubble's
// clock runs the client's timeouts and retry pauses, at once.
func newBubbleEnv(t *testing.T, scopes ...string) *env {
	t.Helper()
	return startEnv(t, emutest.Start(t, emutest.OnNetwork(memnet.New())), scopes...)
}

// inBubble is test run inside a testing/synctest bubble, for t.Run or as
// a test's whole body: its env comes from newBubbleEnv.
func inBubble(test func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) { synctest.Test(t, test) }
}

func startEnv(t *testing.T, emu *emutest.Env, scopes ...string) *env {
	t.Helper()
	if len(scopes) == 0 {
		scopes = []string{emutest.ScopeGmailSend, emutest.ScopeGmailCompose, emutest.ScopeGmailReadonly}
	}
	e := &env{Env: emu}
	gc, err := gmail.New(context.Background(), e.Client(user, scopes...), e.Endpoints, chunk)
	if err != nil {
		t.Fatal(err)
	}
	e.gc = gc
	return e
}

// sentOnce checks that a send succeeded and Gmail sent msg, once.
func (e *env) sentOnce(t *testing.T, sent gmail.Sent, err error, msg []byte) {
	t.Helper()
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	st := e.Emu.Stats()
	if got := e.Message(user, sent.ID); string(got) != string(msg) || st.MessagesSent != 1 {
		t.Errorf("%d messages sent, the stored one %d bytes of %d", st.MessagesSent, len(got), len(msg))
	}
}

// message returns a writer of a valid message whose body has n bytes of
// base64 text, and the whole message it writes.
func message(n int) (gmail.WriteFunc, []byte) {
	body := make([]byte, n*3/4)
	rand.Read(body)
	msg := []byte("From: " + user + "\r\nTo: zoe@example.org\r\nSubject: test\r\nDate: Mon, 02 Mar 2026 10:00:00 +0000\r\n" +
		"Message-ID: <test@example.com>\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString(body) + "\r\n")
	return func(_ context.Context, w io.Writer) error {
		for rest := msg; len(rest) > 0; {
			k := min(len(rest), 10_000)
			if _, err := w.Write(rest[:k]); err != nil {
				return err
			}
			rest = rest[k:]
		}
		return nil
	}, msg
}

// failingAfter writes part of msg, then fails.
func failingAfter(msg []byte, n int) gmail.WriteFunc {
	return func(_ context.Context, w io.Writer) error {
		if _, err := w.Write(msg[:n]); err != nil {
			return err
		}
		return errors.New("drive broke")
	}
}

// Upload paths as the emulator counts them: the session opens with a
// POST, each chunk and status query is a PUT on its URI, a cancellation
// a DELETE.
const (
	openPath   = "POST /upload/gmail/v1/users/{userId}/messages/send"
	chunkPath  = "PUT /upload/gmail/v1/users/{userId}/messages/send"
	cancelPath = "DELETE /upload/gmail/v1/users/{userId}/messages/send"
)

// TestSendInOneRequestAndInChunks: a message within one chunk goes in one
// request after the session opens, a larger one in a request per chunk.
func TestSendInOneRequestAndInChunks(t *testing.T) {
	for _, tt := range []struct {
		size, chunks int
	}{{10_000, 1}, {3 * chunk, 4}} {
		t.Run(fmt.Sprint(tt.size), func(t *testing.T) {
			e := newEnv(t)
			write, msg := message(tt.size)
			sent, err := e.gc.Send(context.Background(), "", write)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if sent.ID == "" || sent.ThreadID == "" {
				t.Errorf("sent = %+v", sent)
			}
			if got := e.Message(user, sent.ID); string(got) != string(msg) {
				t.Errorf("stored message differs from what was written (%d vs %d bytes)", len(got), len(msg))
			}
			st := e.Emu.Stats()
			if st.MessagesSent != 1 {
				t.Errorf("messages sent = %d", st.MessagesSent)
			}
			if st.Paths[openPath] != 1 || st.Paths[chunkPath] != int64(tt.chunks) {
				t.Errorf("%d sessions opened, %d chunk requests for %d bytes; want 1 and %d", st.Paths[openPath], st.Paths[chunkPath], len(msg), tt.chunks)
			}
		})
	}
}

// TestWriterFailureSendsNothing: a writer that fails inside the first
// chunk sends none of the message (at most a session is opened, and it
// is cancelled); one that fails later leaves a session that is never
// completed, and cancelled too.
func TestWriterFailureSendsNothing(t *testing.T) {
	tests := []struct {
		name          string
		size, failAt  int
		wantContacted bool
	}{
		{"inside the first chunk", 3 * chunk, chunk / 2, false},
		{"after two chunks", 3 * chunk, 2*chunk + 100, true},
		{"one byte short of the end", 3 * chunk, -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			_, msg := message(tt.size)
			at := tt.failAt
			if at < 0 {
				at = len(msg) - 1
			}
			_, err := e.gc.Send(context.Background(), "", failingAfter(msg, at))
			var we *gmail.WriteError
			if !errors.As(err, &we) || we.Err.Error() != "drive broke" {
				t.Fatalf("err = %v, want the writer's error as a WriteError", err)
			}
			if we.Contacted != tt.wantContacted {
				t.Errorf("Contacted = %v, want %v", we.Contacted, tt.wantContacted)
			}
			st := e.Emu.Stats()
			if st.MessagesSent != 0 || st.UploadsFinished != 0 {
				t.Errorf("sent %d, uploads finished %d; want nothing", st.MessagesSent, st.UploadsFinished)
			}
			if !tt.wantContacted && st.Paths[chunkPath] != 0 {
				t.Errorf("%d chunk requests reached Gmail; want none", st.Paths[chunkPath])
			}
			if st.Paths[cancelPath] != st.Paths[openPath] {
				t.Errorf("%d sessions opened, %d cancelled; want every one cancelled", st.Paths[openPath], st.Paths[cancelPath])
			}
		})
	}
}

func TestCancelledSendSendsNothing(t *testing.T) {
	e := newEnv(t)
	_, msg := message(3 * chunk)
	ctx, cancel := context.WithCancel(context.Background())
	write := func(_ context.Context, w io.Writer) error {
		if _, err := w.Write(msg[:2*chunk]); err != nil {
			return err
		}
		cancel()
		_, err := w.Write(msg[2*chunk:])
		return err
	}
	_, err := e.gc.Send(ctx, "", write)
	if err == nil {
		t.Fatal("a cancelled send succeeded")
	}
	if st := e.Emu.Stats(); st.MessagesSent != 0 {
		t.Errorf("messages sent = %d", st.MessagesSent)
	}
}

func TestDraftAndScope(t *testing.T) {
	e := newEnv(t)
	write, _ := message(1000)
	d, err := e.gc.CreateDraft(context.Background(), "", write)
	if err != nil || d.DraftID == "" || d.ID == "" {
		t.Fatalf("CreateDraft = %+v, %v", d, err)
	}

	e = newEnv(t, emutest.ScopeGmailSend)
	write, _ = message(1000)
	_, err = e.gc.CreateDraft(context.Background(), "", write)
	var ge *gmail.Error
	if !errors.As(err, &ge) || !errors.Is(err, gmail.ErrScope) || ge.MaybeSent {
		t.Fatalf("draft without gmail.compose: err = %v, want ErrScope, not sent", err)
	}
	if err.Error() != "gmail drafts.create: HTTP 403 insufficientPermissions: insufficient Google scope" {
		t.Errorf("error text = %q, want the operation, status, reason and cause only", err)
	}
}

func TestProfile(t *testing.T) {
	e := newEnv(t, emutest.ScopeGmailReadonly)
	addr, err := e.gc.Profile(context.Background())
	if err != nil || addr != user {
		t.Fatalf("Profile = %q, %v", addr, err)
	}
	e = newEnv(t, emutest.ScopeGmailSend)
	if _, err := e.gc.Profile(context.Background()); !errors.Is(err, gmail.ErrScope) {
		t.Errorf("Profile with gmail.send only: err = %v, want ErrScope", err)
	}
}

func TestThread(t *testing.T) {
	e := newEnv(t)
	write, _ := message(1000)
	first, err := e.gc.Send(context.Background(), "", write)
	if err != nil {
		t.Fatal(err)
	}
	// Gmail threads a reply that names the thread and answers a message
	// of it with the same subject.
	reply := []byte("From: " + user + "\r\nTo: zoe@example.org\r\nSubject: Re: test\r\nMessage-ID: <reply@example.com>\r\n" +
		"In-Reply-To: <test@example.com>\r\nReferences: <test@example.com>\r\n\r\nyes\r\n")
	second, err := e.gc.Send(context.Background(), first.ThreadID, func(_ context.Context, w io.Writer) error {
		_, err := w.Write(reply)
		return err
	})
	if err != nil || second.ThreadID != first.ThreadID {
		t.Fatalf("reply thread = %q (%v), want %q", second.ThreadID, err, first.ThreadID)
	}
}

// TestEarlyFailureCancelsWriter: when Gmail refuses to open the session
// (while the writer still waits for its source's first byte, as a send
// waits for Drive's), the writer's context is cancelled, so it stops,
// and Send returns Gmail's error, not the writer's.
func TestEarlyFailureCancelsWriter(t *testing.T) {
	e := newEnv(t)
	e.Inject(emulator.Fault{Method: "POST", PathPrefix: "/upload/gmail/v1/users/me/messages/send", Status: 503})
	_, msg := message(3 * chunk)
	stopped := make(chan error, 1)
	write := func(ctx context.Context, w io.Writer) error {
		// A source that never answers, like a stalled Drive download.
		select {
		case <-ctx.Done():
			stopped <- ctx.Err()
			return ctx.Err()
		case <-time.After(20 * time.Second):
			stopped <- nil
		}
		_, err := w.Write(msg)
		return err
	}
	_, err := e.gc.Send(context.Background(), "", write)
	var ge *gmail.Error
	if !errors.As(err, &ge) || !errors.Is(err, gmail.ErrUnavailable) || ge.MaybeSent {
		t.Fatalf("err = %v, want Gmail's 503, nothing sent", err)
	}
	if werr := <-stopped; !errors.Is(werr, context.Canceled) {
		t.Errorf("writer ended with %v, want its context cancelled", werr)
	}
	if st := e.Emu.Stats(); st.MessagesSent != 0 {
		t.Errorf("messages sent = %d", st.MessagesSent)
	}
}

// TestUploadTimeouts: with a short chunk timeout, a chunk that is slow
// once is retried and the message goes once; a chunk, a session open or
// a message's one request that gets no answer fails with ErrStalled long
// before Gmail's delay ends, and only the one request (the whole
// message sent, no answer) may have been sent.
func TestUploadTimeouts(t *testing.T) {
	// A stalled request's body is never read, so the emulator cannot see
	// the client give up and holds it for the whole delay: each case runs
	// in a bubble, where that delay passes at once.
	const (
		path    = "/upload/gmail/v1/users/me/messages/send"
		timeout = 200 * time.Millisecond
		stallNS = 4_000_000_000 // 4 s
	)
	tests := []struct {
		name      string
		size      int
		faults    []emulator.Fault
		wantErr   bool
		maybeSent bool
	}{
		{"a chunk slow once is retried", 3 * chunk, []emulator.Fault{
			{Method: "POST", PathPrefix: path, Delay: 1_000_000}, // 1 ms: the session open passes
			{PathPrefix: path, Delay: stallNS},
		}, false, false},
		{"a chunk that never answers", 3 * chunk, []emulator.Fault{
			{Method: "POST", PathPrefix: path, Delay: 1_000_000},
			{PathPrefix: path, Delay: stallNS, Times: 5},
		}, true, false},
		{"a session open that never answers", 3 * chunk, []emulator.Fault{
			{Method: "POST", PathPrefix: path, Delay: stallNS},
		}, true, false},
		{"a message in one request that never answers", 10_000, []emulator.Fault{
			{Method: "POST", PathPrefix: path, Delay: 1_000_000},
			{PathPrefix: path, Delay: stallNS, Times: 5},
		}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			e := newBubbleEnv(t)
			gc, err := gmail.New(context.Background(), e.Client(user, emutest.ScopeGmailSend), e.Endpoints, chunk, gmail.WithChunkTimeout(timeout))
			if err != nil {
				t.Fatal(err)
			}
			e.Inject(tt.faults...)
			write, msg := message(tt.size)
			start := time.Now()
			sent, err := gc.Send(context.Background(), "", write)
			if took := time.Since(start); took >= stallNS {
				t.Errorf("Send took %v: it waited for Gmail's delay to end", took)
			}
			st := e.Emu.Stats()
			if !tt.wantErr {
				e.sentOnce(t, sent, err, msg)
				return
			}
			var ge *gmail.Error
			if !errors.As(err, &ge) || !errors.Is(err, gmail.ErrStalled) {
				t.Fatalf("err = %v, want ErrStalled", err)
			}
			if ge.MaybeSent != tt.maybeSent || ge.Accepted {
				t.Errorf("MaybeSent = %v, Accepted = %v; want %v, false", ge.MaybeSent, ge.Accepted, tt.maybeSent)
			}
			if st.MessagesSent != 0 || st.UploadsFinished != 0 {
				t.Errorf("sent %d, uploads finished %d; want nothing", st.MessagesSent, st.UploadsFinished)
			}
		}))
	}
}

// TestChunkSizeIsAMultipleOf256KiB: Google requires every resumable chunk
// but the last to be a multiple of 256 KiB, and the emulator refuses any
// other; whatever chunk size drivemail is configured with, its chunks
// are whole multiples, and ChunkSize reports the memory one upload holds.
func TestChunkSizeIsAMultipleOf256KiB(t *testing.T) {
	for _, tc := range []struct{ asked, want int }{
		{0, gmail.DefaultChunkSize},
		{1, chunk},
		{chunk, chunk},
		{chunk + 1, 2 * chunk},
		{300_000, 2 * chunk},
		{5<<20 + 1, 5<<20 + chunk},
	} {
		e := newEnv(t)
		gc, err := gmail.New(context.Background(), e.Client(user, emutest.ScopeGmailSend), e.Endpoints, tc.asked)
		if err != nil {
			t.Fatal(err)
		}
		if got := gc.ChunkSize(); got != tc.want || got%(256<<10) != 0 {
			t.Errorf("chunk size %d: ChunkSize() = %d, want %d", tc.asked, got, tc.want)
		}
		if tc.want > 2*chunk {
			continue // the small ones are sent below; large ones need large messages
		}
		write, msg := message(tc.want*2 + tc.want/2)
		sent, err := gc.Send(context.Background(), "", write)
		if err != nil {
			t.Fatalf("chunk size %d: %v", tc.asked, err)
		}
		if got := e.Message(user, sent.ID); string(got) != string(msg) {
			t.Errorf("chunk size %d: stored %d bytes of %d", tc.asked, len(got), len(msg))
		}
	}
	if gmail.DefaultChunkSize%(256<<10) != 0 {
		t.Errorf("DefaultChunkSize %d is not a multiple of 256 KiB", gmail.DefaultChunkSize)
	}
}

// ranges records the Content-Range of each resumable chunk sent.
type ranges struct {
	base http.RoundTripper
	mu   sync.Mutex
	got  []string
}

func (r *ranges) RoundTrip(req *http.Request) (*http.Response, error) {
	if cr := req.Header.Get("Content-Range"); cr != "" {
		r.mu.Lock()
		r.got = append(r.got, cr)
		r.mu.Unlock()
	}
	return r.base.RoundTrip(req)
}

// TestExpectedSizeEvensChunks: a message whose size is expected goes in
// the fewest chunks the chunk size allows, evened out, and one larger
// than expected still goes whole.
func TestExpectedSizeEvensChunks(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name     string
		size     int
		expected int64
		want     []string
	}{
		{"1.25 MiB in two even chunks", 5 * mib / 4, 5*mib/4 + 1000, []string{"bytes 0-786431/*", "bytes 786432-%d/%d"}},
		{"larger than expected: still whole", 5 * mib / 4, 200_000, []string{"bytes 0-262143/*", "bytes 262144-524287/*"}},
		{"unknown: whole chunks", 5 * mib / 4, 0, []string{"bytes 0-1048575/*", "bytes 1048576-%d/%d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			rec := &ranges{base: e.Client(user, emutest.ScopeGmailSend).Transport}
			gc, err := gmail.New(context.Background(), &http.Client{Transport: rec}, e.Endpoints, mib)
			if err != nil {
				t.Fatal(err)
			}
			write, msg := message(tt.size)
			sent, err := gc.Send(context.Background(), "", write, gmail.ExpectedSize(tt.expected))
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if got := e.Message(user, sent.ID); string(got) != string(msg) {
				t.Errorf("stored %d bytes, wrote %d", len(got), len(msg))
			}
			for i, w := range tt.want {
				if strings.Contains(w, "%d") {
					tt.want[i] = fmt.Sprintf(w, len(msg)-1, len(msg))
				}
			}
			if len(rec.got) < len(tt.want) || !slices.Equal(rec.got[:len(tt.want)], tt.want) {
				t.Errorf("chunks %q, want %q first", rec.got, tt.want)
			}
		})
	}
}

// TestSmallMessageHoldsNoChunk: a small message whose size is expected
// is sent in one chunk request with a buffer just over its size, not the
// whole 5 MiB chunk a message of unknown size gets, so the sends waiting
// on Gmail hold little memory.
func TestSmallMessageHoldsNoChunk(t *testing.T) {
	e := newEnv(t)
	gc, err := gmail.New(context.Background(), e.Client(user, emutest.ScopeGmailSend), e.Endpoints, gmail.DefaultChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	allocated := func(opts ...gmail.UploadOption) uint64 {
		write, _ := message(70_000)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := gc.Send(context.Background(), "", write, opts...); err != nil {
			t.Fatalf("Send: %v", err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	unknown := allocated()
	expected := allocated(gmail.ExpectedSize(75_000))
	t.Logf("allocated for a 70 KB message: %d bytes with its size unknown, %d expected", unknown, expected)
	if expected > 2<<20 {
		t.Errorf("a 70 KB message of expected size allocated %d bytes; want under 2 MiB (no whole chunk)", expected)
	}
	if unknown < gmail.DefaultChunkSize {
		t.Errorf("with its size unknown it allocated %d bytes; the comparison needs the whole chunk", unknown)
	}
	if st := e.Emu.Stats(); st.Paths[chunkPath] != 2 {
		t.Errorf("%d chunk requests for two small messages; want one each", st.Paths[chunkPath])
	}
}
