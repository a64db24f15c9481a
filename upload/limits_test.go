package upload_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/upload"
)

func TestSizeLimitAtTheEdgeAndPast(t *testing.T) {
	const limit = 100_000
	e := newEnv(t, func(c *upload.Config) { c.MaxBytes = limit })
	u := e.signIn("ann@example.com")
	at, past := pattern(limit), pattern(limit+1)

	e.mustStore(e.sendRaw(http.MethodPost, "/upload?name=at.bin", u.token, at), at, "at.bin", "application/octet-stream")
	e.mustStore(e.postForm("/upload", u.token, part{field: "file", filename: "at-form.bin", data: at}), at, "at-form.bin", "application/octet-stream")
	e.emu.ResetStats()

	others := e.signIn("bob@example.com")
	cases := map[string]func() answer{
		// Content-Length says it all: refused before a byte is read.
		"raw, announced": func() answer { return e.sendRaw(http.MethodPost, "/upload?name=past.bin", others.token, past) },
		// No length: counted while streaming.
		"raw, streamed": func() answer {
			req, _ := http.NewRequest(http.MethodPost, e.base+"/upload?name=past.bin", io.MultiReader(bytes.NewReader(past)))
			req.Header.Set("Authorization", "Bearer "+others.token)
			return e.do(req)
		},
		// A form's length includes its framing: the file is counted.
		"form, streamed": func() answer {
			return e.postForm("/upload", others.token, part{field: "file", filename: "past.bin", data: past})
		},
		"form, announced": func() answer {
			return e.postForm("/upload", others.token, part{field: "file", filename: "past.bin", data: pattern(limit + 90_000)})
		},
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			e.t = t
			e.mustRefuse(send(), http.StatusRequestEntityTooLarge, others, "upload limit of 97.7 KiB")
		})
	}
	if st := e.emu.Stats(); st.UploadsFinished != 0 {
		t.Errorf("%d uploads finished past the limit", st.UploadsFinished)
	}
	// curl sends "Expect: 100-continue" with a large body: the refusal
	// comes before the body, and curl prints it.
	dir := t.TempDir()
	big := pattern(limit * 20)
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o600); err != nil {
		t.Fatal(err)
	}
	out := curl(t, dir, "-sS", "-H", "Authorization: Bearer "+others.token, "-T", "big.bin", "-X", "POST", e.base+"/upload?name=big.bin")
	if !strings.Contains(string(out), "upload limit of 97.7 KiB") {
		t.Errorf("curl printed %q", out)
	}
}

func TestUploadsPerUserAreRateLimited(t *testing.T) {
	e := newEnv(t, func(c *upload.Config) { c.RatePerWindow = 2 })
	ann, bob := e.signIn("ann@example.com"), e.signIn("bob@example.com")
	for i := range 2 {
		if a := e.sendRaw(http.MethodPost, fmt.Sprintf("/upload?name=%d.txt", i), ann.token, []byte("x")); a.status != http.StatusCreated {
			t.Fatalf("upload %d: %d %s", i, a.status, a.raw)
		}
	}
	a := e.sendRaw(http.MethodPost, "/upload?name=3.txt", ann.token, []byte("x"))
	if a.status != http.StatusTooManyRequests || !strings.Contains(a.errMsg, "at most 2 every 10 minutes per user. Try again in 10 minutes") {
		t.Fatalf("third upload: %d %s", a.status, a.raw)
	}
	if s, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || s <= 0 || s > 600 {
		t.Errorf("Retry-After = %q", a.header.Get("Retry-After"))
	}
	// Tickets count too: a spent window refuses the ticket's upload.
	tk := e.ticket(ann, upload.Request{Name: "t.txt"})
	if a := e.sendRaw(http.MethodPut, ticketPath(tk), "", []byte("x")); a.status != http.StatusTooManyRequests {
		t.Errorf("ticket upload in a spent window: %d", a.status)
	}
	// Other users have their own count, and the next window starts afresh.
	if a := e.sendRaw(http.MethodPost, "/upload?name=b.txt", bob.token, []byte("x")); a.status != http.StatusCreated {
		t.Errorf("bob: %d %s", a.status, a.raw)
	}
	e.clock.Advance(upload.DefaultRateWindow)
	if a := e.sendRaw(http.MethodPut, ticketPath(tk), "", []byte("x")); a.status != http.StatusCreated {
		t.Errorf("next window, same ticket: %d %s", a.status, a.raw)
	}
}

// slowUpload starts a raw upload whose body the test writes; the answer
// arrives on the returned channel.
func (e *env) slowUpload(path, token string) (*io.PipeWriter, <-chan answer) {
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, e.base+path, pr)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := e.hc.Do(req)
		if err != nil {
			done <- answer{raw: err.Error()}
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		done <- answer{status: resp.StatusCode, raw: string(body), header: resp.Header}
	}()
	return pw, done
}

// waitStarted waits until the emulated Drive has opened n upload sessions:
// the server has read at least one full chunk of each.
func (e *env) waitStarted(n int64) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.emu.Stats().UploadsStarted < n {
		if time.Now().After(deadline) {
			e.t.Fatalf("only %d uploads started", e.emu.Stats().UploadsStarted)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const chunk = drive.UploadChunkSize

func TestConcurrentUploadsPerUserAreCapped(t *testing.T) {
	e := newEnv(t, func(c *upload.Config) { c.MaxPerUser = 1 })
	ann, bob := e.signIn("ann@example.com"), e.signIn("bob@example.com")
	data := pattern(chunk + 100)
	pw, done := e.slowUpload("/upload?name=big.bin", ann.token)
	if _, err := pw.Write(data[:chunk+1]); err != nil {
		t.Fatal(err)
	}
	e.waitStarted(1)
	a := e.sendRaw(http.MethodPost, "/upload?name=second.txt", ann.token, []byte("x"))
	if a.status != http.StatusTooManyRequests || a.errMsg != "Your previous upload is still running; wait for it to finish and try again. Nothing was stored." || a.header.Get("Retry-After") == "" {
		t.Errorf("second concurrent upload: %d %s", a.status, a.raw)
	}
	if b := e.sendRaw(http.MethodPost, "/upload?name=bob.txt", bob.token, []byte("x")); b.status != http.StatusCreated {
		t.Errorf("another user's upload: %d %s", b.status, b.raw)
	}
	pw.Write(data[chunk+1:])
	pw.Close()
	if got := <-done; got.status != http.StatusCreated {
		t.Fatalf("first upload: %d %s", got.status, got.raw)
	}
	if a := e.sendRaw(http.MethodPost, "/upload?name=third.txt", ann.token, []byte("x")); a.status != http.StatusCreated {
		t.Errorf("after the first finished: %d %s", a.status, a.raw)
	}
}

func TestSlowClientTimesOut(t *testing.T) { synctest.Test(t, testSlowClientTimesOut) }

func testSlowClientTimesOut(t *testing.T) {
	e := newBubbleEnv(t, func(c *upload.Config) { c.IdleTimeout = 300 * time.Millisecond; c.MinBytes = 1 << 10 })
	u := e.signIn("ann@example.com")
	pw, done := e.slowUpload("/upload?name=slow.txt", u.token)
	defer pw.Close()
	start := time.Now()
	go func() {
		// A trickle: 100 bytes, then 10 bytes now and then, never 1 KiB a
		// window. The pauses are the slow client under test, not waits.
		pw.Write(pattern(100))
		for i := 0; i < 50; i++ {
			select {
			case <-time.After(100 * time.Millisecond):
			case <-t.Context().Done():
				return
			}
			if _, err := pw.Write(pattern(10)); err != nil {
				return
			}
		}
	}()
	a := <-done
	if a.status != http.StatusRequestTimeout || !strings.Contains(a.raw, "too slow") {
		t.Errorf("slow client: %d %s", a.status, a.raw)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the slow client was cut after %v", d)
	}
	e.waitLog("upload refused")
	if n := len(e.files(u)); n != 0 {
		t.Errorf("%d files after a timeout", n)
	}
}

// cutAfter sends a request with a body of announced length total over a
// raw connection, writes only sent bytes of it, and hangs up.
func (e *env) cutAfter(head string, body []byte, sent int) {
	e.t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.base, "http://"))
	if err != nil {
		e.t.Fatal(err)
	}
	w := bufio.NewWriter(conn)
	fmt.Fprintf(w, "%sContent-Length: %d\r\nHost: %s\r\n\r\n", head, len(body), strings.TrimPrefix(e.base, "http://"))
	w.Write(body[:sent])
	w.Flush()
	conn.Close()
}

func TestDisconnectHalfWayCreatesNothing(t *testing.T) {
	data := pattern(3*chunk + 5)
	for _, form := range []bool{false, true} {
		t.Run(map[bool]string{false: "raw", true: "form"}[form], func(t *testing.T) {
			e := newEnv(t)
			u := e.signIn("ann@example.com")
			head := "POST /upload?name=half.bin HTTP/1.1\r\nAuthorization: Bearer " + u.token + "\r\n"
			body := data
			if form {
				r, ct := formBody(part{field: "file", filename: "half.bin", data: data})
				b, _ := io.ReadAll(r)
				body = b
				head = "POST /upload HTTP/1.1\r\nAuthorization: Bearer " + u.token + "\r\nContent-Type: " + ct + "\r\n"
			}
			// Past the first chunks, so Drive has a session with bytes in it.
			e.cutAfter(head, body, len(body)/2+chunk)
			e.waitLog("upload refused")
			if n := len(e.files(u)); n != 0 {
				t.Errorf("%d files after the client hung up", n)
			}
			st := e.emu.Stats()
			if st.UploadsStarted != 1 || st.UploadsFinished != 0 {
				t.Errorf("uploads started %d, finished %d; want 1 and 0", st.UploadsStarted, st.UploadsFinished)
			}
			if !strings.Contains(e.logs.String(), "refusal=cut_off") {
				t.Errorf("log does not say the upload was cut off:\n%s", e.logs.String())
			}
		})
	}
}

func TestDrive503sOnChunksStillGiveOneFile(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	data := pattern(2*chunk + 12_345)
	pw, done := e.slowUpload("/upload?name=resilient.bin", u.token)
	if _, err := pw.Write(data[:chunk+1]); err != nil {
		t.Fatal(err)
	}
	e.waitStarted(1)
	// The session is open; the next chunk requests fail twice with 503.
	if err := e.emu.InjectFault(emulator.Fault{Method: http.MethodPost, PathPrefix: "/upload/drive/v3/files", Times: 2, Status: http.StatusServiceUnavailable}); err != nil {
		t.Fatal(err)
	}
	pw.Write(data[chunk+1:])
	pw.Close()
	got := <-done
	if got.status != http.StatusCreated {
		t.Fatalf("upload: %d %s", got.status, got.raw)
	}
	files := e.files(u)
	if len(files) != 1 || files[0].SHA256 != sha(data) || files[0].Size != int64(len(data)) {
		t.Fatalf("files = %+v, want one with the bytes sent", files)
	}
	if st := e.emu.Stats(); st.UploadsFinished != 1 {
		t.Errorf("%d uploads finished, want 1", st.UploadsFinished)
	}
	resp, err := http.Get(e.google.URL + "/_emulator/faults")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	pending, _ := io.ReadAll(resp.Body)
	if s := strings.TrimSpace(string(pending)); s != "[]" && s != "null" {
		t.Errorf("faults not all hit: %s", s)
	}
}

func TestDriveFailureIsA502WithoutGooglesWords(t *testing.T) {
	cases := map[string]emulator.Fault{
		"folder lookup": {Method: http.MethodGet, PathPrefix: "/drive/v3/files", Status: http.StatusInternalServerError},
		"upload":        {Method: http.MethodPost, PathPrefix: "/upload/drive/v3/files", Status: http.StatusInternalServerError},
	}
	for name, fault := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			u := e.signIn("ann@example.com")
			if name == "upload" {
				// Create the folder first, so the fault hits the upload.
				e.mustStore(e.sendRaw(http.MethodPost, "/upload?name=first.txt", u.token, []byte("1")), []byte("1"), "first.txt", "text/plain")
			}
			before := len(e.files(u))
			if err := e.emu.InjectFault(fault); err != nil {
				t.Fatal(err)
			}
			a := e.sendRaw(http.MethodPost, "/upload?name=a.txt", u.token, []byte("x"))
			if a.status != http.StatusBadGateway || !strings.Contains(a.errMsg, "nothing was saved") {
				t.Errorf("status %d %s", a.status, a.raw)
			}
			for _, leak := range []string{"Backend", "backendError", "Internal", "googleapi", "ya29"} {
				if strings.Contains(a.raw, leak) || strings.Contains(e.logs.String(), "ya29") {
					t.Errorf("%q leaked: answer %s", leak, a.raw)
				}
			}
			if n := len(e.files(u)); n != before {
				t.Errorf("%d files, want %d", n, before)
			}
		})
	}
}

// Once the whole body is in, the client has nothing left to send: a Drive
// that takes longer than the idle timeout to store the file must not cut
// the upload (the server's read deadline would cancel the request).
func TestSlowDriveAfterTheLastByteIsNotATimeout(t *testing.T) {
	synctest.Test(t, testSlowDriveAfterTheLastByteIsNotATimeout)
}

func testSlowDriveAfterTheLastByteIsNotATimeout(t *testing.T) {
	e := newBubbleEnv(t, func(c *upload.Config) { c.IdleTimeout = 300 * time.Millisecond; c.MinBytes = 1 })
	u := e.signIn("ann@example.com")
	for _, size := range []int{1000, chunk + 1000} {
		data := pattern(size)
		if err := e.emu.InjectFault(emulator.Fault{Method: http.MethodPost, PathPrefix: "/upload/drive/v3/files", Times: 3,
			Delay: 500_000_000}); err != nil { // half a second
			t.Fatal(err)
		}
		name := fmt.Sprintf("slow-%d.bin", size)
		e.mustStore(e.sendRaw(http.MethodPost, "/upload?name="+name, u.token, data), data, name, "application/octet-stream")
		if err := e.emu.InjectFault(emulator.Fault{Method: http.MethodPost, PathPrefix: "/upload/drive/v3/files", Times: 3,
			Delay: 500_000_000}); err != nil {
			t.Fatal(err)
		}
		name = fmt.Sprintf("slow-form-%d.bin", size)
		e.mustStore(e.postForm("/upload", u.token, part{field: "file", filename: name, data: data}), data, name, "application/octet-stream")
	}
}
