package compose_test

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/identity"
)

// Gmail upload requests as the emulator counts them: a session opens
// with a POST, its chunks and status queries are PUTs, a cancel a DELETE.
const (
	gmailOpens   = "POST /upload/gmail/v1/users/{userId}/messages/send"
	gmailChunks  = "PUT /upload/gmail/v1/users/{userId}/messages/send"
	gmailCancels = "DELETE /upload/gmail/v1/users/{userId}/messages/send"
)

// wire sits under a send's HTTP client: it counts every response body
// opened and closed, records Drive downloads as they are asked for and
// answered, and can hold one file's download until a condition on the
// others holds (or a generous deadline passes, which the test reports).
type wire struct {
	t    *testing.T
	base http.RoundTripper

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	bodies   int
	closed   int
	asked    map[string]bool  // file ids whose download was requested
	answered map[string]int   // file id → status of its download's answer
	read     map[string]int64 // file id → bytes of its download read
	gmail    int              // Gmail upload requests answered

	holdID  string             // the file whose download waits, once
	until   func(w *wire) bool // what it waits for; called with mu held
	waited  chan bool          // the hold's outcome: true if until held
	didHold bool
}

func newWire(t *testing.T, base http.RoundTripper) *wire {
	return &wire{t: t, base: base, changed: make(chan struct{}), asked: map[string]bool{}, answered: map[string]int{}, read: map[string]int64{}, waited: make(chan bool, 1)}
}

// hold makes id's download wait until until(w) holds.
func (w *wire) hold(id string, until func(w *wire) bool) {
	w.holdID, w.until = id, until
}

// downloadOf is the file id of a Drive download (alt=media, not a Range
// read of an archive's directory), or "".
func downloadOf(r *http.Request) string {
	id, ok := strings.CutPrefix(r.URL.Path, "/drive/v3/files/")
	if !ok || r.URL.Query().Get("alt") != "media" || r.Header.Get("Range") != "" || strings.Contains(id, "/") {
		return ""
	}
	return id
}

func (w *wire) update(change func()) {
	w.mu.Lock()
	change()
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
}

func (w *wire) RoundTrip(r *http.Request) (*http.Response, error) {
	id := downloadOf(r)
	if id != "" {
		w.update(func() { w.asked[id] = true })
	}
	if id != "" && id == w.holdID {
		w.mu.Lock()
		first := !w.didHold
		w.didHold = true
		w.mu.Unlock()
		if first { // a retried download goes at once
			w.waited <- w.waitFor(w.until)
		}
	}
	res, err := w.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	w.update(func() {
		w.bodies++
		if id != "" {
			w.answered[id] = res.StatusCode
		}
		if strings.HasPrefix(r.URL.Path, "/upload/gmail/") {
			w.gmail++
		}
	})
	res.Body = &countedBody{ReadCloser: res.Body, w: w, id: id}
	return res, nil
}

// waitFor waits until cond holds, at most 20 s, and says whether it did.
func (w *wire) waitFor(cond func(w *wire) bool) bool {
	deadline := time.After(20 * time.Second)
	for {
		w.mu.Lock()
		ok, ch := cond(w), w.changed
		w.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			return false
		}
	}
}

type countedBody struct {
	io.ReadCloser
	w    *wire
	id   string // the file of a download
	once sync.Once
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.id != "" && n > 0 {
		b.w.update(func() { b.w.read[b.id] += int64(n) })
	}
	return n, err
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.w.update(func() { b.w.closed++ }) })
	return b.ReadCloser.Close()
}

// allClosed fails the test unless every response body was closed.
func (w *wire) allClosed() {
	w.t.Helper()
	if !w.waitFor(func(w *wire) bool { return w.closed == w.bodies }) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.t.Errorf("%d of %d response bodies were never closed", w.bodies-w.closed, w.bodies)
	}
}

// held fails the test unless the held download waited for its condition.
func (w *wire) held() {
	w.t.Helper()
	select {
	case ok := <-w.waited:
		if !ok {
			w.t.Errorf("the download of %s waited 20 s for a condition that never came", w.holdID)
		}
	default:
		w.t.Errorf("the download of %s was never asked for", w.holdID)
	}
}

// noGoroutinesLeft fails the test if a goroutine of the send path
// (compose, gmail, drive, the Google client library) is still running
// once the send has returned: a goroutine-leak check scoped to the code
// under test, since the in-process emulator and idle connections keep
// goroutines of their own.
func noGoroutinesLeft(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := sendGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of the send are still running:\n\n%s", len(left), strings.Join(left, "\n\n"))
		}
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond) // polling a condition, as goleak does
	}
}

func sendGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var left []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, pkg := range []string{"drivemail/drivemail/compose.", "drivemail/drivemail/gmail.", "drivemail/drivemail/drive.", "google.golang.org/api/"} {
			if strings.Contains(g, pkg) {
				left = append(left, g)
				break
			}
		}
	}
	return left
}

// attach makes a request attaching files, in order.
func attach(subject string, files ...drivesvc.File) compose.Request {
	req := compose.Request{To: []string{"zoe@example.org"}, Subject: subject, BodyText: "hi"}
	for _, f := range files {
		req.Attachments = append(req.Attachments, compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}})
	}
	return req
}

func (e *env) sendThrough(w *wire, req compose.Request) (compose.Result, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return e.svc.Send(ctx, e.as(identity.User{}, &http.Client{Transport: w}), req, compose.Options{})
}

// TestNextFilesOpenWhileOneStreams: while the first file's download
// waits, the next files' downloads have already been asked for, so their
// time to first byte passes at once instead of one after another; the
// message is whole, and nothing is left open or running.
func TestNextFilesOpenWhileOneStreams(t *testing.T) {
	e := newEnv(t, compose.Config{})
	a, ab := e.putBytes("a.pdf", 50_000)
	b, bb := e.putBytes("b.pdf", 50_000)
	c, cb := e.putBytes("c.pdf", 50_000)
	w := newWire(t, e.hc.Transport)
	w.hold(a.ID, func(w *wire) bool { return w.asked[b.ID] && w.asked[c.ID] })
	res, err := e.sendThrough(w, attach("ahead", a, b, c))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	w.held()
	_, root := goParse(t, e.Message(user, res.ID))
	leaves := root.leaves()
	if len(leaves) != 4 {
		t.Fatalf("%d parts, want the body and three files", len(leaves))
	}
	for i, want := range [][]byte{ab, bb, cb} {
		if shaHex(leaves[i+1].Body) != shaHex(want) {
			t.Errorf("attachment %d does not match Drive's bytes", i+1)
		}
	}
	w.allClosed()
	noGoroutinesLeft(t)
}

// TestDriveFailureMidPrefetch: the third file is gone when its download
// is asked for, while the first is still waiting on Drive. The send ends
// at once with the third file's refusal, before any of the message
// reaches Gmail; the first file's answer and every other body are
// closed, and nothing is left running.
func TestDriveFailureMidPrefetch(t *testing.T) {
	e := newEnv(t, compose.Config{})
	a, _ := e.putBytes("a.pdf", 1<<20)
	b, _ := e.putBytes("b.pdf", 50_000)
	c, _ := e.putBytes("c.pdf", 50_000)
	e.Inject(
		emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + c.ID, Delay: 1_000_000}, // 1 ms: the metadata call passes
		emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + c.ID, Status: 404, Times: 5},
	)
	w := newWire(t, e.hc.Transport)
	w.hold(a.ID, func(w *wire) bool { return w.answered[c.ID] == http.StatusNotFound })
	before := e.Emu.Stats()
	_, err := e.sendThrough(w, attach("gone", a, b, c))
	if !isRefusal(err) || !strings.Contains(err.Error(), "Attachment 3") || !strings.Contains(err.Error(), "Nothing was sent") {
		t.Fatalf("err = %v, want attachment 3's refusal saying nothing was sent", err)
	}
	w.held()
	after := e.Emu.Stats()
	outboxUnchanged(t, before, after)
	if n := after.Paths[gmailChunks] - before.Paths[gmailChunks]; n != 0 {
		t.Errorf("%d Gmail chunk requests; the failure was known before the first chunk filled", n)
	}
	if opened, cancelled := after.Paths[gmailOpens]-before.Paths[gmailOpens], after.Paths[gmailCancels]-before.Paths[gmailCancels]; opened != cancelled {
		t.Errorf("%d Gmail uploads opened, %d cancelled; want every one cancelled", opened, cancelled)
	}
	w.allClosed()
	noGoroutinesLeft(t)
}

// TestRefusalAfterPrefetchStarted: the first file, a .tgz, is refused
// for a blocked entry found as it streams, after the next two files'
// downloads were opened. Nothing is sent, their answers are closed
// unread, and nothing is left running.
func TestRefusalAfterPrefetchStarted(t *testing.T) {
	e := newEnv(t, compose.Config{})
	bad := e.Put(user, drivesvc.FileSpec{Name: "tools.tgz", Content: tgzOf(t, map[string]int{"readme.txt": 5000, "bin/run.exe": 10})})
	b, _ := e.putBytes("b.pdf", 1<<20)
	c, _ := e.putBytes("c.pdf", 50_000)
	w := newWire(t, e.hc.Transport)
	w.hold(bad.ID, func(w *wire) bool { return w.answered[b.ID] == http.StatusOK && w.answered[c.ID] == http.StatusOK })
	before := e.Emu.Stats()
	_, err := e.sendThrough(w, attach("blocked", bad, b, c))
	if !isRefusal(err) || !strings.Contains(err.Error(), "run.exe") || !strings.Contains(err.Error(), "Nothing was sent") {
		t.Fatalf("err = %v, want the blocked entry's refusal saying nothing was sent", err)
	}
	w.held()
	outboxUnchanged(t, before, e.Emu.Stats())
	w.allClosed()
	noGoroutinesLeft(t)
}

// TestGmailFailureWhileDriveStreams: Gmail refuses a middle chunk while
// the first file is still being read from Drive and the next is already
// open. Nothing is sent, both downloads are closed, and nothing is left
// running.
func TestGmailFailureWhileDriveStreams(t *testing.T) {
	const path = "/upload/gmail/v1/users/me/messages/send"
	e := newEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10})
	// Under 5 MB encoded, so the message goes in chunks (a larger one of
	// known length would go in one request).
	a, _ := e.putBytes("a.pdf", 3<<20)
	b, _ := e.putBytes("b.pdf", 50_000)
	e.Inject(
		emulator.Fault{PathPrefix: path, Delay: 1_000_000, Times: 2}, // 1 ms: the session open and the first chunk pass
		emulator.Fault{PathPrefix: path, Status: 400},
	)
	w := newWire(t, e.hc.Transport)
	before := e.Emu.Stats()
	_, err := e.sendThrough(w, attach("gmail fails", a, b))
	if !isRefusal(err) || !strings.Contains(err.Error(), "Nothing was sent") {
		t.Fatalf("err = %v, want a refusal saying nothing was sent", err)
	}
	after := e.Emu.Stats()
	outboxUnchanged(t, before, after)
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := w.read[a.ID]; n >= 3<<20 {
		t.Errorf("all %d bytes of a.pdf were read; the case needs Gmail to fail while it streams", n)
	}
	if !w.asked[b.ID] {
		t.Errorf("b.pdf was not opened while a.pdf streamed")
	}
	w.mu.Unlock()
	w.allClosed()
	w.mu.Lock()
	noGoroutinesLeft(t)
}

// TestNothingOpenedBeforeARefusal: the files before a blocked zip in the
// list are not opened ahead: the zip's directory is read and the message
// refused before any download, as without the prefetch.
func TestNothingOpenedBeforeARefusal(t *testing.T) {
	e := newEnv(t, compose.Config{})
	a, _ := e.putBytes("a.pdf", 50_000)
	b, _ := e.putBytes("b.pdf", 50_000)
	z := e.Put(user, drivesvc.FileSpec{Name: "bundle.zip", Content: zipOf(t, "a.txt", "tools/setup.exe")})
	w := newWire(t, e.hc.Transport)
	before := e.Emu.Stats()
	_, err := e.sendThrough(w, attach("zip last", a, b, z))
	if !isRefusal(err) || !strings.Contains(err.Error(), "setup.exe") {
		t.Fatalf("err = %v, want the refusal naming setup.exe", err)
	}
	unchanged(t, before, e.Emu.Stats())
	if len(w.asked) != 0 {
		t.Errorf("downloads asked for before the refusal: %v", w.asked)
	}
	w.allClosed()
	noGoroutinesLeft(t)
}
