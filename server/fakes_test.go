package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/tools"
)

// The fake bearer check's users: testToken is user-1's, otherToken
// user-2's; draftsToken is user-1 again, having granted drafts too.
const (
	testToken   = "dm_test_token"
	otherToken  = "dm_other_token"
	draftsToken = "dm_drafts_token"
)

var testUsers = map[string]identity.User{
	testToken:  {ID: "user-1", Email: "demo@example.com", GoogleScopes: []string{"https://www.googleapis.com/auth/gmail.send"}},
	otherToken: {ID: "user-2", Email: "other@example.com", GoogleScopes: []string{"https://www.googleapis.com/auth/gmail.send"}},
	draftsToken: {ID: "user-1", Email: "demo@example.com", GoogleScopes: []string{
		"https://www.googleapis.com/auth/gmail.send", "https://www.googleapis.com/auth/gmail.compose"}},
}

// fakeAuth admits the test users' tokens and serves canned metadata.
type fakeAuth struct{ base string }

func (a fakeAuth) ProtectedResourceMetadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"resource":"`+a.base+`/mcp","authorization_servers":["`+a.base+`"]}`)
	})
}

func (a fakeAuth) AuthorizationServerMetadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"issuer":"`+a.base+`"}`)
	})
}

func (a fakeAuth) Endpoints() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		io.WriteString(w, "oauth "+r.URL.Path+" "+string(rune('0'+len(b)%10)))
	})
}

func (a fakeAuth) RequireBearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := testUsers[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+a.base+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(identity.WithUser(r.Context(), u)))
	})
}

// fakeDrive answers every search with one file.
type fakeDrive struct{}

func (fakeDrive) Search(ctx context.Context, _ *account.Account, q drive.Query) (drive.Page, error) {
	return drive.Page{Files: []drive.File{{ID: "1AbCdEfGhIjKlMnOpQrStUvWxYz012345", Name: "Q3 report.pdf", MimeType: "application/pdf", Size: 1234}}}, nil
}

func (fakeDrive) Get(ctx context.Context, _ *account.Account, ref drive.Ref) (drive.File, error) {
	return drive.File{}, &drive.Error{Op: "files.get", Code: 404, Err: drive.ErrNotFound}
}

// fakeMail reports progress, optionally blocks until released, and
// records the sends it completed.
type fakeMail struct {
	mu      sync.Mutex
	started chan struct{}        // closed when a send begins, if set
	release chan struct{}        // a send waits for it, if set
	ctxs    chan context.Context // receives each send's context, if set
	ended   chan error           // receives each send's error when it returns, if set
	sent    []compose.Request
}

// SendDraft is not used by the server's tests.
func (m *fakeMail) SendDraft(context.Context, *account.Account, string, func(context.Context, compose.Summary) error) (compose.DraftSent, error) {
	return compose.DraftSent{}, errors.New("fakeMail: no drafts")
}

func (m *fakeMail) Send(ctx context.Context, _ *account.Account, req compose.Request, opts tools.SendOptions) (_ compose.Result, err error) {
	if m.ended != nil {
		defer func() { m.ended <- err }()
	}
	if m.started != nil {
		close(m.started)
	}
	if m.ctxs != nil {
		m.ctxs <- ctx
	}
	if m.release != nil {
		select {
		case <-m.release:
		case <-ctx.Done():
			return compose.Result{}, ctx.Err()
		}
	}
	if strings.Contains(req.Subject, "fail") {
		return compose.Result{}, errors.New("gmail: HTTP 500 token=ya29.secret")
	}
	const total = 3 << 20
	if opts.Progress != nil {
		for done := int64(1 << 20); done <= total; done += 1 << 20 {
			opts.Progress(done, total)
		}
		// Gmail takes a moment to answer after the last byte. mcp-go can
		// drop a notification queued in the instant its request ends.
		// Kept as a sleep: it plays Gmail's pace, it waits for nothing.
		time.Sleep(50 * time.Millisecond)
	}
	m.mu.Lock()
	m.sent = append(m.sent, req)
	m.mu.Unlock()
	return compose.Result{ID: "msg-1", ThreadID: "thr-1", SizeBytes: total}, nil
}

func (m *fakeMail) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

type fakeStore struct{ err error }

func (s fakeStore) Ping(ctx context.Context) error { return s.err }
