package upload

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/store"
)

var (
	keyA = bytes.Repeat([]byte{1}, 32)
	keyB = bytes.Repeat([]byte{2}, 32)
)

func TestTicketSignAndVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := claims{User: "u1", Name: "a.pdf", Size: new(int64(10)), SHA256: strings.Repeat("ab", 32), Expires: now.Add(time.Minute).Unix()}
	old, _ := newSigner([][]byte{keyA})
	rotated, _ := newSigner([][]byte{keyB, keyA})
	other, _ := newSigner([][]byte{keyB})

	tok, err := old.sign(c)
	if err != nil {
		t.Fatal(err)
	}
	// Rotation: the new ring verifies what the old key signed.
	got, err := rotated.verify(tok, now)
	if err != nil || got.User != "u1" || got.Name != "a.pdf" || got.Size == nil || *got.Size != 10 || got.Nonce == "" {
		t.Fatalf("verify after rotation = %+v, %v", got, err)
	}
	if _, err := other.verify(tok, now); !errors.Is(err, errTicketInvalid) {
		t.Errorf("a ring without the key accepted the ticket: %v", err)
	}
	// Expiry: valid until the second before, refused at the instant.
	if _, err := old.verify(tok, now.Add(time.Minute-time.Nanosecond)); err != nil {
		t.Errorf("just before expiry: %v", err)
	}
	if _, err := old.verify(tok, now.Add(time.Minute)); !errors.Is(err, errTicketExpired) {
		t.Errorf("at expiry: %v", err)
	}
	// Every nonce differs, so no two tickets are the same.
	tok2, _ := old.sign(c)
	if tok2 == tok {
		t.Error("two tickets are identical")
	}
	// Any change to any byte is refused.
	for i := 3; i < len(tok); i++ {
		b := []byte(tok)
		b[i] ^= 0x01
		if _, err := old.verify(string(b), now); err == nil {
			t.Fatalf("flipping byte %d was accepted", i)
		}
	}
	if _, err := newSigner([][]byte{keyA[:31]}); err == nil {
		t.Error("a 31-byte secret was accepted")
	}
	if _, err := newSigner(nil); err == nil {
		t.Error("no secret was accepted")
	}
}

func TestTicketKeyIsNotTheSecret(t *testing.T) {
	s, _ := newSigner([][]byte{keyA})
	if bytes.Equal(s.keys[0], keyA) {
		t.Error("tickets are signed with the raw secret, which also seals Google tokens")
	}
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestContentChecks(t *testing.T) {
	data := []byte("0123456789")
	cases := []struct {
		name     string
		max      int64
		size     int64
		sha      string
		atEnd    func() error
		status   int // 0: passes
		readErr  error
		wantText string
	}{
		{name: "no declarations", max: 10, size: -1},
		{name: "at the limit", max: 10, size: 10, sha: sum(data)},
		{name: "one past the limit", max: 9, size: -1, status: 413, wantText: "upload limit of 9 bytes"},
		{name: "longer than declared", max: 100, size: 9, status: 422, wantText: "larger than the 9 bytes"},
		{name: "shorter than declared", max: 100, size: 11, status: 422, wantText: "has 10 bytes, not the 11"},
		{name: "digest differs", max: 100, size: -1, sha: sum([]byte("x")), status: 422, wantText: "SHA-256 is " + sum(data)},
		{name: "trailer refused", max: 100, size: -1, atEnd: func() error { return refuse(400, "trailer", "after the file") }, status: 400, wantText: "after the file"},
		{name: "cut off", max: 100, size: -1, readErr: io.ErrUnexpectedEOF, status: 400, wantText: "cut off"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r io.Reader = bytes.NewReader(data)
			if tc.readErr != nil {
				r = io.MultiReader(bytes.NewReader(data[:5]), iotest.ErrReader(tc.readErr))
			}
			c := newContent(iotest.OneByteReader(r), tc.max, tc.size, tc.sha, tc.atEnd)
			_, err := io.ReadAll(c)
			if tc.status == 0 {
				if err != nil || c.sum != sum(data) || c.n != 10 {
					t.Fatalf("err %v, sum %s, n %d", err, c.sum, c.n)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != tc.status || !strings.Contains(e.Text, tc.wantText) {
				t.Fatalf("err = %v, want %d saying %q", err, tc.status, tc.wantText)
			}
			// The failure sticks: the Drive client never sees io.EOF.
			if _, again := c.Read(make([]byte, 1)); again != err {
				t.Errorf("second read = %v", again)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	b := newBudget(strings.NewReader("abcdef"), 4)
	got, err := io.ReadAll(b)
	if string(got) != "abcd" || !errors.Is(err, errBudget) {
		t.Errorf("read %q, %v", got, err)
	}
	if e := readRefusal(err); e.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("budget refusal status %d", e.Status)
	}
}

func TestWords(t *testing.T) {
	sizes := map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB", 1 << 30: "1 GiB", 25 << 20: "25 MiB", 100_000: "97.7 KiB"}
	for n, want := range sizes {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
	durs := map[time.Duration]string{time.Hour: "1 hour", 10 * time.Minute: "10 minutes", 90 * time.Second: "90 seconds", time.Second: "1 second", 5 * time.Millisecond: "5ms"}
	for d, want := range durs {
		if got := spell(d); got != want {
			t.Errorf("spell(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestNamesAndTypes(t *testing.T) {
	names := map[string]string{
		"report.pdf":            "report.pdf",
		"/etc/passwd":           "passwd",
		`C:\Users\x\a.txt`:      "a.txt",
		"dir/":                  "attachment",
		"..":                    "attachment",
		"a\x00b\x1f.txt":        "a b .txt",
		"\u202etxt.exe":         "txt.exe",
		"  spaced   out  .md  ": "spaced out .md",
	}
	for in, want := range names {
		if got := cleanName(in); got != want {
			t.Errorf("cleanName(%q) = %q, want %q", in, got, want)
		}
	}
	types := map[string]string{
		"application/pdf":                   "application/pdf",
		"Text/Plain; charset=utf-8":         "text/plain",
		"application/octet-stream":          "",
		"application/x-www-form-urlencoded": "",
		"":                                  "",
		"not a type":                        "",
	}
	for in, want := range types {
		if got := declaredType(in); got != want {
			t.Errorf("declaredType(%q) = %q, want %q", in, got, want)
		}
	}
	folders := map[string]string{
		"1AbC": "1AbC", " 1AbC ": "1AbC", "mcp-file://h/1AbC": "1AbC", "MCP-FILE://h/1AbC": "1AbC",
		"mcp-file://h/1AbC?x": "", "mcp-file://h/a/b": "", "https://drive.google.com/drive/folders/1AbC": "1AbC", "My Folder": "",
	}
	for in, want := range folders {
		if got := folderID(in); got != want {
			t.Errorf("folderID(%q) = %q, want %q", in, got, want)
		}
	}
	if got := truncate("ééé", 3); got != "é…" {
		t.Errorf("truncate cuts inside a character: %q", got)
	}
}

// Fakes for a service without Google or a database.

type memLimits struct {
	mu    sync.Mutex
	used  map[string]bool
	count map[string]int64
}

func (m *memLimits) UseOnce(ctx context.Context, key string, expires time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used[key] {
		return store.ErrUsed
	}
	m.used[key] = true
	return nil
}

func (m *memLimits) ReleaseOnce(ctx context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.used, key)
	return nil
}

func (m *memLimits) Hit(ctx context.Context, key string, window time.Duration) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count[key]++
	return m.count[key], nil
}

// fakeDrive reserves ids and records what it was asked to create.
type fakeDrive struct {
	mu      sync.Mutex
	created []drive.NewFile
	content [][]byte
	idErr   error
}

func (f *fakeDrive) Upload(ctx context.Context, nf drive.NewFile, r io.Reader) (drive.File, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return drive.File{}, &drive.Error{Op: "files.create", Err: err}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, nf)
	f.content = append(f.content, b)
	id := nf.ID
	if id == "" {
		id = "1DrivePickedThisId"
	}
	return drive.File{ID: id, Name: nf.Name, MimeType: nf.MimeType, Size: int64(len(b)), SHA256: sum(b)}, nil
}

func (f *fakeDrive) GenerateID(ctx context.Context) (string, error) {
	return "1ReservedIdForTheTicket", f.idErr
}

func (f *fakeDrive) DeleteFile(ctx context.Context, id string) error { return nil }

func (f *fakeDrive) FolderInRoot(ctx context.Context, name string) (string, error) {
	return "1UploadsFolderId", nil
}

func (f *fakeDrive) CheckUploadFolder(ctx context.Context, id string) error { return nil }

func newFakeService(t *testing.T, fd *fakeDrive) (*Service, *httptest.Server) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	t.Cleanup(srv.Close)
	base, _ := url.Parse("http://" + srv.Listener.Addr().String())
	s, err := New(Config{BaseURL: base, Secrets: [][]byte{keyA}, Accounts: account.NewDoor(nil, account.Options{}),
		Limits: &memLimits{used: map[string]bool{}, count: map[string]int64{}}})
	if err != nil {
		t.Fatal(err)
	}
	s.driveOf = func(context.Context, *account.Account) (driveAPI, error) { return fd, nil }
	mux.Handle("PUT /upload/{ticket}", s.Ticket())
	srv.Start()
	return s, srv
}

// asUser is the account of a user who let drivemail add files to Drive.
func asUser(id string) *account.Account {
	return account.NewDoor(nil, account.Options{}).Open(identity.User{ID: id, GoogleScopes: []string{"https://www.googleapis.com/auth/drive.file"}})
}

func TestTicketCarriesTheReservedFileID(t *testing.T) {
	fd := &fakeDrive{}
	s, srv := newFakeService(t, fd)
	tk, err := s.RequestUpload(context.Background(), asUser("u1"), Request{Name: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if tk.Handle != "mcp-file://"+host+"/1ReservedIdForTheTicket" {
		t.Fatalf("handle = %q", tk.Handle)
	}
	req, _ := http.NewRequest(http.MethodPut, tk.UploadURL, strings.NewReader("hello"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || len(fd.created) != 1 {
		t.Fatalf("status %d, created %v", resp.StatusCode, fd.created)
	}
	nf := fd.created[0]
	if nf.ID != "1ReservedIdForTheTicket" || nf.Name != "a.txt" || nf.ParentID != "1UploadsFolderId" || nf.MimeType != "text/plain" {
		t.Errorf("created %+v", nf)
	}
}

func TestTicketWithoutAReservedID(t *testing.T) {
	fd := &fakeDrive{idErr: errors.New("generateIds: HTTP 404")}
	s, _ := newFakeService(t, fd)
	tk, err := s.RequestUpload(context.Background(), asUser("u1"), Request{Name: "a.txt"})
	if err != nil || tk.Handle != "" || tk.UploadURL == "" {
		t.Fatalf("ticket = %+v, %v; want one without a handle", tk, err)
	}
}

func TestRequestUploadNeedsTheDriveScope(t *testing.T) {
	s, _ := newFakeService(t, &fakeDrive{})
	acct := account.NewDoor(nil, account.Options{}).Open(identity.User{ID: "u1", GoogleScopes: []string{"https://www.googleapis.com/auth/gmail.send"}})
	_, err := s.RequestUpload(context.Background(), acct, Request{Name: "a.txt"})
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusForbidden || !strings.Contains(e.Text, "Reconnect") {
		t.Errorf("err = %v", err)
	}
}

func TestNewChecksItsConfig(t *testing.T) {
	base, _ := url.Parse("https://dm.example.com")
	ok := Config{BaseURL: base, Secrets: [][]byte{keyA}, Accounts: account.NewDoor(nil, account.Options{}), Limits: &memLimits{}}
	bad := map[string]func(c *Config){
		"no base":     func(c *Config) { c.BaseURL = nil },
		"no host":     func(c *Config) { c.BaseURL = &url.URL{Path: "/x"} },
		"no secret":   func(c *Config) { c.Secrets = nil },
		"no accounts": func(c *Config) { c.Accounts = nil },
		"no limits":   func(c *Config) { c.Limits = nil },
	}
	for name, mutate := range bad {
		c := ok
		mutate(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	s, err := New(ok)
	if err != nil {
		t.Fatal(err)
	}
	if s.cfg.MaxBytes != 1<<30 || s.cfg.TicketTTL != 15*time.Minute || s.cfg.FolderName != "drivemail uploads" {
		t.Errorf("defaults = %+v", s.cfg)
	}
	if got := s.uploadURL("t1.x.y"); got != "https://dm.example.com/upload/t1.x.y" {
		t.Errorf("upload URL = %s", got)
	}
}

func TestReadAheadKeepsOrderAndTheFinalError(t *testing.T) {
	data := make([]byte, 3*aheadBlockSize+aheadBlockSize/3)
	for i := range data {
		data[i] = byte(i * 13)
	}
	errCut := errors.New("cut")
	cases := map[string]struct {
		src     io.Reader
		wantErr error
	}{
		"whole":            {iotest.HalfReader(bytes.NewReader(data)), nil},
		"fails at the end": {io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errCut)), errCut},
		"empty":            {bytes.NewReader(nil), nil},
	}
	for name, tc := range cases {
		ra := newReadAhead(tc.src, newBlocks(aheadBlocks))
		got, err := io.ReadAll(ra)
		ra.close(func() { t.Fatalf("%s: unblock called after the source ended", name) })
		if err != tc.wantErr {
			t.Errorf("%s: err = %v, want %v", name, err, tc.wantErr)
		}
		want := data
		if name == "empty" {
			want = nil
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: read %d bytes that differ from the %d written", name, len(got), len(want))
		}
	}
}

// stuckReader returns one block, then blocks until released.
type stuckReader struct {
	release chan struct{}
	first   bool
}

func (s *stuckReader) Read(p []byte) (int, error) {
	if !s.first {
		s.first = true
		return len(p), nil
	}
	<-s.release
	return 0, errors.New("read deadline passed")
}

func TestReadAheadCloseUnblocksAStuckRead(t *testing.T) {
	src := &stuckReader{release: make(chan struct{})}
	ra := newReadAhead(src, newBlocks(0))
	if _, err := ra.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	done := make(chan struct{})
	go func() {
		ra.close(func() { once.Do(func() { close(src.release) }) })
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("close did not return after unblocking the read")
	}
}

func TestBlocksKeepsOnlyWhatItIsAllowed(t *testing.T) {
	bs := newBlocks(2)
	a, b, c := bs.get(), bs.get(), bs.get()
	for _, blk := range [][]byte{a, b, c} {
		if len(blk) != aheadBlockSize {
			t.Fatalf("block of %d bytes", len(blk))
		}
		bs.put(blk[:10])
	}
	if n := len(bs.spare); n != 2 {
		t.Errorf("%d blocks kept, want 2", n)
	}
	if got := bs.get(); &got[0] != &a[0] || len(got) != aheadBlockSize {
		t.Error("a kept block was not reused whole")
	}
}
