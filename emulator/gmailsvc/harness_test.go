package gmailsvc

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/emulator/internal/core"
	"github.com/drivemail/drivemail/internal/memnet"
)

const (
	ann   = "ann@example.com"
	bob   = "bob@example.com"
	chunk = googleapi.MinUploadChunkSize // 256 KiB keeps resumable tests fast
)

// fixture is a Gmail emulator on a test server, behind fault injection.
type fixture struct {
	t      *testing.T
	srv    *httptest.Server
	hc     *http.Client // reaches srv
	deps   core.Deps
	faults *core.Faults
	gmail  *Service
	// blobDir holds the content the emulator stored, one file a blob.
	blobDir string
}

// blobCount is how many blobs the emulator keeps on disk.
func (f *fixture) blobCount() int {
	f.t.Helper()
	entries, err := os.ReadDir(f.blobDir)
	if err != nil {
		f.t.Fatal(err)
	}
	return len(entries)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return startFixture(t, nil)
}

// newBubbleFixture is newFixture for a test inside a testing/synctest
// bubble (call it there): served on an in-memory network, so the
// clients' retry pauses and net/http's half-second pause before closing
// a connection whose body was refused pass at once.
func newBubbleFixture(t *testing.T) *fixture {
	t.Helper()
	return startFixture(t, memnet.New())
}

// startFixture is newFixture on network n, or on loopback when n is nil.
func startFixture(t *testing.T, n *memnet.Network) *fixture {
	t.Helper()
	dir := t.TempDir()
	blobs, err := core.NewBlobs(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, faults: &core.Faults{}, blobDir: dir}
	f.deps = core.Deps{Accounts: core.NewAccounts(time.Hour, nil), Blobs: blobs, Stats: core.NewStats(), Now: time.Now}
	f.gmail = New(f.deps)
	mux := http.NewServeMux()
	f.gmail.Register(mux)
	if n != nil {
		f.srv, f.hc = n.Serve(t, f.faults.Middleware(mux))
		return f
	}
	f.srv = httptest.NewServer(f.faults.Middleware(mux))
	f.hc = &http.Client{Transport: http.DefaultTransport}
	t.Cleanup(f.srv.Close)
	return f
}

// transport adds a bearer token and runs hooks before the Nth request on
// an upload session (1-based), so a test can aim a fault at one chunk.
type transport struct {
	base  http.RoundTripper
	token string
	mu    sync.Mutex
	n     int
	hooks map[int]func()
}

func (tr *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+tr.token)
	if strings.Contains(r.URL.RawQuery, "upload_id=") {
		tr.mu.Lock()
		tr.n++
		hook := tr.hooks[tr.n]
		tr.mu.Unlock()
		if hook != nil {
			hook()
		}
	}
	return tr.base.RoundTrip(r)
}

// client is the real gmail/v1 client for user with scopes.
func (f *fixture) client(user string, scopes ...string) *gmail.Service {
	return f.clientWithHooks(f.deps.Accounts.IssueAccess(user, "test", scopes), nil)
}

func (f *fixture) clientWithHooks(token string, hooks map[int]func()) *gmail.Service {
	f.t.Helper()
	hc := &http.Client{Transport: &transport{base: f.hc.Transport, token: token, hooks: hooks}}
	svc, err := gmail.NewService(context.Background(), option.WithEndpoint(f.srv.URL+"/"), option.WithHTTPClient(hc))
	if err != nil {
		f.t.Fatal(err)
	}
	return svc
}

// sender is a client allowed to send and to read back.
func (f *fixture) sender(user string) *gmail.Service {
	return f.client(user, scopeSend, scopeReadonly, scopeCompose)
}

// send uploads raw as a message with the chunk size used by the tests.
func send(svc *gmail.Service, raw io.Reader, threadID string) (*gmail.Message, error) {
	return svc.Users.Messages.Send("me", &gmail.Message{ThreadId: threadID}).
		Media(raw, googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(chunk)).Do()
}

// readRaw fetches a message with format=raw and decodes it.
func readRaw(t *testing.T, svc *gmail.Service, id string) []byte {
	t.Helper()
	m, err := svc.Users.Messages.Get("me", id).Format("raw").Do()
	if err != nil {
		t.Fatalf("get raw %s: %v", id, err)
	}
	b, err := base64.URLEncoding.DecodeString(m.Raw)
	if err != nil {
		t.Fatalf("raw is not base64url: %v", err)
	}
	return b
}

// apiError asserts err is a Google API error with code and reason.
func apiError(t *testing.T, err error, code int, reason string) *googleapi.Error {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != code || len(ge.Errors) == 0 || ge.Errors[0].Reason != reason {
		t.Fatalf("err = %v, want %d %s", err, code, reason)
	}
	return ge
}

// msg is a message to build.
type msg struct {
	from, to, cc, bcc, subject string
	extraHeaders               []string
	text, html                 string
	inline                     []file // referenced from html as cid:<name>
	attach                     []file
}

type file struct {
	name, mimeType string
	content        []byte
}

// build writes the message with CRLF line endings: multipart/mixed of
// multipart/alternative (text, multipart/related(html, inline…)) and the
// attachments, as drivemail builds them.
func (m msg) build() []byte {
	var b bytes.Buffer
	h := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	h("From", m.from)
	h("To", m.to)
	h("Cc", m.cc)
	h("Bcc", m.bcc)
	h("Subject", m.subject)
	h("Date", "Mon, 04 May 2026 10:00:00 +0000")
	h("Message-ID", "<"+strings.ReplaceAll(m.subject, " ", ".")+"@test.example>")
	for _, x := range m.extraHeaders {
		b.WriteString(x + "\r\n")
	}
	h("MIME-Version", "1.0")
	b.WriteString("Content-Type: multipart/mixed; boundary=MIX\r\n\r\n")
	b.WriteString("--MIX\r\nContent-Type: multipart/alternative; boundary=ALT\r\n\r\n")
	b.WriteString("--ALT\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + m.text + "\r\n")
	if m.html != "" {
		b.WriteString("--ALT\r\nContent-Type: multipart/related; boundary=REL\r\n\r\n")
		b.WriteString("--REL\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + m.html + "\r\n")
		for _, f := range m.inline {
			fmt.Fprintf(&b, "--REL\r\nContent-Type: %s\r\nContent-Disposition: inline; filename=%q\r\nContent-ID: <%s>\r\nContent-Transfer-Encoding: base64\r\n\r\n%s\r\n",
				f.mimeType, f.name, f.name, fold(base64.StdEncoding.EncodeToString(f.content)))
		}
		b.WriteString("--REL--\r\n")
	}
	b.WriteString("--ALT--\r\n")
	for _, f := range m.attach {
		fmt.Fprintf(&b, "--MIX\r\nContent-Type: %s\r\nContent-Disposition: attachment; filename=%q\r\nContent-Transfer-Encoding: base64\r\n\r\n%s\r\n",
			f.mimeType, f.name, fold(base64.StdEncoding.EncodeToString(f.content)))
	}
	b.WriteString("--MIX--\r\n")
	return b.Bytes()
}

func fold(s string) string {
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76] + "\r\n")
		s = s[76:]
	}
	b.WriteString(s)
	return b.String()
}

// pattern returns n deterministic bytes.
func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i/251)
	}
	return p
}

// basic is a small valid message from ann to bob.
func basic(subject string) msg {
	return msg{from: "Ann <" + ann + ">", to: bob, subject: subject, text: "Hello " + subject}
}
