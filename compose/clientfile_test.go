package compose_test

import (
	"bytes"
	"crypto/rand"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/clientfile/clientfiletest"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/memnet"
	"github.com/drivemail/drivemail/internal/refusal"
)

// clientEnv is an emulator env with a file host standing in for
// ChatGPT's, and a Service that fetches from it.
func clientEnv(t *testing.T, adjust func(*clientfile.Config)) (*env, *clientfiletest.Host) {
	t.Helper()
	host := clientfiletest.NewHost(t)
	e := newEnv(t, compose.Config{Files: host.Fetcher(t, adjust)}, account.Options{GmailChunkSize: 1 << 20})
	return e, host
}

// clientBubbleEnv is clientEnv for a test inside a testing/synctest
// bubble: the file host too is on an in-memory network.
func clientBubbleEnv(t *testing.T, adjust func(*clientfile.Config)) (*env, *clientfiletest.Host) {
	t.Helper()
	host := clientfiletest.NewHostOn(t, memnet.New())
	e := newBubbleEnv(t, compose.Config{Files: host.Fetcher(t, adjust)}, account.Options{GmailChunkSize: 1 << 20})
	return e, host
}

func clientFile(url, name string) compose.Attachment {
	return compose.Attachment{Source: compose.ClientFile{URL: url, FileID: "file-abc123", Name: name}}
}

func message(atts ...compose.Attachment) compose.Request {
	return compose.Request{To: []string{"zoe@example.org"}, Subject: "files", BodyText: "attached", Attachments: atts}
}

// TestClientFileStreamsIntoTheMessage: a 20 MiB file the chat client
// holds goes into the message byte for byte, beside a Drive file, named
// as the client named it.
func TestClientFileStreamsIntoTheMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 20 MiB")
	}
	e, host := clientEnv(t, nil)
	data := make([]byte, 20<<20)
	rand.Read(data)
	host.Handle("/file-abc123", clientfiletest.Serve(data, "application/octet-stream", ""))
	pdf, pdfBytes := e.putBytes("Q3.pdf", 50_000)

	res, err := e.send(message(
		compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(pdf.ID)}},
		compose.Attachment{Source: compose.ClientFile{URL: host.URL("", "/file-abc123?se=2030&sig=x"), FileID: "file-abc123", MimeType: "video/mp4", Name: "demo.mp4"}},
	), compose.Options{})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if len(res.Attached) != 2 || res.Attached[1].Name != "demo.mp4" || res.Attached[1].MimeType != "video/mp4" || res.Attached[1].Bytes != int64(len(data)) || res.Attached[1].FileID != "" {
		t.Fatalf("attached = %+v", res.Attached)
	}
	_, root := goParse(t, e.Message(user, res.ID))
	leaves := root.leaves()
	if len(leaves) != 3 || !bytes.Equal(leaves[1].Body, pdfBytes) || leaves[2].Filename != "demo.mp4" || !bytes.Equal(leaves[2].Body, data) {
		t.Fatalf("sent parts do not match the files: %d leaves", len(leaves))
	}
}

// TestClientFileOverTheLimitIsRefusedBeforeItsBody: a Content-Length
// past 25 MiB ends the send before any of the body is read, and before
// anything reaches Gmail.
func TestClientFileOverTheLimitIsRefusedBeforeItsBody(t *testing.T) {
	e, host := clientEnv(t, nil)
	sent := make(chan int64, 1)
	host.Handle("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(compose.MaxAttachmentBytes+1))
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the body is never asked for
		sent <- 0
	})
	before := e.Emu.Stats()
	_, err := e.send(message(clientFile(host.URL("", "/big"), "video.mov")), compose.Options{})
	r, ok := refusal.As(err)
	if !ok || r.Kind != "client_file_too_large" || !strings.Contains(r.Text, "26,214,401 bytes") || !strings.Contains(r.Text, "save_to_drive") {
		t.Fatalf("err = %v, want a too-large refusal with the size and what to do", err)
	}
	if n := <-sent; n != 0 {
		t.Fatalf("the host sent %d bytes", n)
	}
	unchanged(t, before, e.Emu.Stats())
}

// TestClientFileRedirectToPrivateAddress: a hop to a private address is
// refused, with nothing sent.
func TestClientFileRedirectToPrivateAddress(t *testing.T) {
	e, host := clientEnv(t, nil)
	host.Handle("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, host.URL(clientfiletest.PrivateHost, "/f"), http.StatusFound)
	})
	before := e.Emu.Stats()
	_, err := e.send(message(clientFile(host.URL("", "/hop"), "a.pdf")), compose.Options{})
	if r, ok := refusal.As(err); !ok || r.Kind != "client_file_refused" || !strings.Contains(r.Text, "public address") {
		t.Fatalf("err = %v, want the refusal of a private address", err)
	}
	unchanged(t, before, e.Emu.Stats())
}

// TestClientFileStallSendsNothing: a host that stops part-way through
// the body is given up on after the idle timeout, while the message
// streams, and the message is abandoned: nothing sent.
func TestClientFileStallSendsNothing(t *testing.T) { synctest.Test(t, testClientFileStallSendsNothing) }

func testClientFileStallSendsNothing(t *testing.T) {
	e, host := clientBubbleEnv(t, func(c *clientfile.Config) { c.IdleTimeout = 500 * time.Millisecond })
	host.Handle("/stall", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "3000000")
		_, _ = io.CopyN(w, zeros{}, 1<<20)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	for _, path := range []string{"/stall"} {
		before := e.Emu.Stats()
		_, err := e.send(message(clientFile(host.URL("", path), "a.bin")), compose.Options{})
		r, ok := refusal.As(err)
		if !ok || r.Kind != "client_file_stalled" || !strings.Contains(r.Text, "Nothing was sent") || r.Delivery != refusal.NotSent {
			t.Fatalf("%s: err = %v, want a stall refusal saying nothing was sent", path, err)
		}
		outboxUnchanged(t, before, e.Emu.Stats())
	}
}

// TestClientFileTrickleSendsNothing: a host that keeps sending, too
// slowly, is given up on after the total reading time.
func TestClientFileTrickleSendsNothing(t *testing.T) {
	synctest.Test(t, testClientFileTrickleSendsNothing)
}

func testClientFileTrickleSendsNothing(t *testing.T) {
	e, host := clientBubbleEnv(t, func(c *clientfile.Config) { c.MaxDuration = time.Second })
	host.Handle("/trickle", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "3000000")
		for range 3000 {
			if _, err := w.Write(make([]byte, 1000)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-timeAfter(5):
			}
		}
	})
	before := e.Emu.Stats()
	_, err := e.send(message(clientFile(host.URL("", "/trickle"), "a.bin")), compose.Options{})
	if r, ok := refusal.As(err); !ok || r.Kind != "client_file_stalled" || !strings.Contains(r.Text, "too slowly") {
		t.Fatalf("err = %v, want a too-slow refusal", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
}

// TestClientFileExpiredURL: a host that refuses the signed URL (expired)
// gets the sentence that sends the user to attach the file again.
func TestClientFileExpiredURL(t *testing.T) {
	e, host := clientEnv(t, nil)
	host.Handle("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "AuthenticationFailed: Signed expiry time has passed", http.StatusForbidden)
	})
	before := e.Emu.Stats()
	_, err := e.send(message(clientFile(host.URL("", "/old?se=2020-01-01&sig=x"), "report.pdf")), compose.Options{})
	r, ok := refusal.As(err)
	if !ok || r.Kind != "client_file_expired" {
		t.Fatalf("err = %v, want client_file_expired", err)
	}
	want := `The download link of attachment 1 ("report.pdf") has expired or was withdrawn (its host refused it). Ask the user to attach the file to the conversation again, then call again with the new file.`
	if r.Text != want {
		t.Fatalf("sentence:\n%s\nwant:\n%s", r.Text, want)
	}
	unchanged(t, before, e.Emu.Stats())
}

// TestClientFileBlockedTypes: a program is refused by its name before
// its body is read; a zip that holds one is refused as it streams,
// before Gmail finalizes the message.
func TestClientFileBlockedTypes(t *testing.T) {
	e, host := clientEnv(t, nil)
	host.Handle("/exe", clientfiletest.Serve([]byte("MZ"), "application/octet-stream", ""))
	host.Handle("/zip", clientfiletest.Serve(zipOf(t, "notes.txt", "bin/setup.exe"), "application/zip", "tools.zip"))
	before := e.Emu.Stats()
	_, err := e.send(message(clientFile(host.URL("", "/exe"), "setup.exe")), compose.Options{})
	if r, ok := refusal.As(err); !ok || r.Kind != "blocked_type" || !strings.Contains(r.Text, "leave it out") || strings.Contains(r.Text, "link") {
		t.Fatalf("err = %v, want a blocked-type refusal without link advice", err)
	}
	_, err = e.send(message(clientFile(host.URL("", "/zip"), "")), compose.Options{})
	r, ok := refusal.As(err)
	if !ok || r.Kind != "blocked_type" || !strings.Contains(r.Text, "bin/setup.exe") || !strings.Contains(r.Text, "Nothing was sent") {
		t.Fatalf("err = %v, want the zip's program named and nothing sent", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
}

// TestClientFilesOff: a server without a Fetcher refuses client files
// with what to do instead.
func TestClientFilesOff(t *testing.T) {
	e := newEnv(t, compose.Config{})
	_, err := e.send(message(clientFile("https://files.oaiusercontent.com/file-1?sig=x", "a.pdf")), compose.Options{})
	if r, ok := refusal.As(err); !ok || r.Kind != "client_files_off" || !strings.Contains(r.Text, "request_upload") {
		t.Fatalf("err = %v, want client_files_off", err)
	}
}

func timeAfter(ms int) <-chan time.Time { return time.After(time.Duration(ms) * time.Millisecond) }

// TestClientFileOfUnannouncedSizeAtTheLimit: a client file whose host
// sends no Content-Length is counted as it streams; beside a Drive file,
// the attachments may reach 25 MiB exactly, and one byte more abandons
// the message with nothing sent and a sentence that names the file.
func TestClientFileOfUnannouncedSizeAtTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 50 MiB")
	}
	e, host := clientEnv(t, nil)
	const driveBytes = 20 << 20
	pdf, _ := e.putBytes("big.pdf", driveBytes)
	chunked := func(n int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			for sent := 0; sent < n; {
				k := min(1<<20, n-sent)
				if _, err := w.Write(make([]byte, k)); err != nil {
					return
				}
				w.(http.Flusher).Flush() // no Content-Length: chunked
				sent += k
			}
		}
	}
	host.Handle("/at", chunked(compose.MaxAttachmentBytes-driveBytes))
	host.Handle("/past", chunked(compose.MaxAttachmentBytes-driveBytes+1))
	drive := compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(pdf.ID)}}

	if _, err := e.send(message(drive, clientFile(host.URL("", "/at"), "scan.bin")), compose.Options{}); err != nil {
		t.Fatalf("attachments of exactly 25 MiB: %v", err)
	}
	before := e.Emu.Stats()
	_, err := e.send(message(drive, clientFile(host.URL("", "/past"), "scan.bin")), compose.Options{})
	r, ok := refusal.As(err)
	if !ok || r.Kind != clientfile.KindTooLarge || !strings.Contains(r.Text, `grew past Gmail's 25 MiB limit while attachment 2 ("scan.bin") streamed`) ||
		!strings.Contains(r.Text, "Nothing was sent") || r.Delivery != refusal.NotSent {
		t.Fatalf("one byte past: %v", err)
	}
	outboxUnchanged(t, before, e.Emu.Stats())
}
