package upload_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/tools"
	"github.com/drivemail/drivemail/upload"
)

func TestTicketWorksOnceThenIsRefused(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	data := pattern(70_000)
	tk := e.ticket(u, upload.Request{Name: "Q3 report.pdf", Size: new(int64(len(data))), SHA256: sha(data)})
	if tk.Method != http.MethodPut || !strings.HasPrefix(tk.UploadURL, e.base+"/upload/t1.") {
		t.Fatalf("ticket = %+v", tk)
	}
	if want := e.clock.Now().Add(upload.DefaultTicketTTL); !tk.ExpiresAt.Equal(want) {
		t.Errorf("expires_at = %v, want %v", tk.ExpiresAt, want)
	}
	// No bearer token: the ticket is the credential.
	e.mustStore(e.sendRaw(http.MethodPut, ticketPath(tk), "", data), data, "Q3 report.pdf", "application/pdf")
	again := e.sendRaw(http.MethodPut, ticketPath(tk), "", data)
	if again.status != http.StatusConflict || !strings.Contains(again.errMsg, "already used") {
		t.Errorf("second use: %d %s", again.status, again.raw)
	}
	if n := len(e.files(u)); n != 1 {
		t.Errorf("%d files after a ticket was used twice, want 1", n)
	}
	// The ticket is a credential: no log line carries it.
	ticket := strings.TrimPrefix(ticketPath(tk), "/upload/")
	if logs := e.logs.String(); !strings.Contains(logs, "/upload/{ticket}") || strings.Contains(logs, ticket[:20]) {
		t.Errorf("logs show the ticket, or no request line:\n%s", logs)
	}
}

func TestTicketWorksOnceAcrossReplicas(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	other := e.replica()
	tk := e.ticket(u, upload.Request{Name: "a.txt"})
	req, _ := http.NewRequest(http.MethodPut, other+ticketPath(tk), strings.NewReader("a"))
	e.mustStore(e.do(req), []byte("a"), "a.txt", "text/plain")
	again := e.sendRaw(http.MethodPut, ticketPath(tk), "", []byte("a"))
	if again.status != http.StatusConflict {
		t.Errorf("reuse on the first replica: %d %s", again.status, again.raw)
	}
}

func TestTicketTakesAFormPOST(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	tk := e.ticket(u, upload.Request{Name: "notes.md", MimeType: "text/x-markdown"})
	a := e.postForm(ticketPath(tk), "", part{field: "file", filename: "notes.md", contentType: "text/plain", data: []byte("# hi")})
	// The type given to request_upload wins over the part's.
	e.mustStore(a, []byte("# hi"), "notes.md", "text/x-markdown")
}

func TestTicketExpires(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	early := e.ticket(u, upload.Request{Name: "a.txt"})
	late := e.ticket(u, upload.Request{Name: "b.txt"})
	e.clock.Advance(upload.DefaultTicketTTL - time.Second)
	e.mustStore(e.sendRaw(http.MethodPut, ticketPath(early), "", []byte("a")), []byte("a"), "a.txt", "text/plain")
	e.clock.Advance(time.Second)
	a := e.sendRaw(http.MethodPut, ticketPath(late), "", []byte("b"))
	if a.status != http.StatusGone || !strings.Contains(a.errMsg, "expired") || !strings.Contains(a.errMsg, "request_upload") {
		t.Errorf("expired ticket: %d %s", a.status, a.raw)
	}
	if n := len(e.files(u)); n != 1 {
		t.Errorf("%d files, want only the one sent in time", n)
	}
}

// reclaim decodes a ticket's claims, lets edit change them, and puts the
// ticket back together with its original signature.
func reclaim(t *testing.T, tk upload.Ticket, edit func(map[string]any)) string {
	t.Helper()
	path := ticketPath(tk)
	raw := strings.TrimPrefix(path, "/upload/")
	body, sig, _ := strings.Cut(strings.TrimPrefix(raw, "t1."), ".")
	js, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(js, &c); err != nil {
		t.Fatal(err)
	}
	edit(c)
	js, _ = json.Marshal(c)
	return "/upload/t1." + base64.RawURLEncoding.EncodeToString(js) + "." + sig
}

func TestTicketCannotBeUsedForAnotherUser(t *testing.T) {
	e := newEnv(t)
	ann := e.signIn("ann@example.com")
	bob := e.signIn("bob@example.com")
	tk := e.ticket(ann, upload.Request{Name: "a.txt"})
	forged := reclaim(t, tk, func(c map[string]any) { c["u"] = bob.id })
	a := e.sendRaw(http.MethodPut, forged, "", []byte("x"))
	e.mustRefuse(a, http.StatusForbidden, bob, "not valid")
	// Bob's own bearer token does not make Ann's ticket his.
	b := e.sendRaw(http.MethodPut, ticketPath(tk), bob.token, []byte("x"))
	if b.status != http.StatusCreated {
		t.Fatalf("ticket use: %d %s", b.status, b.raw)
	}
	if len(e.files(bob)) != 0 || len(e.files(ann)) != 1 {
		t.Errorf("bob has %d files, ann %d; the file belongs in Ann's Drive", len(e.files(bob)), len(e.files(ann)))
	}
	// A ticket signed with another server's secret is refused as well.
	other := newEnv(t)
	foreign := other.ticket(other.signIn("ann@example.com"), upload.Request{Name: "a.txt"})
	c := e.sendRaw(http.MethodPut, ticketPath(foreign), "", []byte("x"))
	if c.status != http.StatusForbidden {
		t.Errorf("foreign ticket: %d %s", c.status, c.raw)
	}
	for name, path := range map[string]string{
		"cut short":   ticketPath(tk)[:40],
		"no dot":      "/upload/t1.abc",
		"bad base64":  "/upload/t1.!!!.!!!",
		"other issue": strings.Replace(ticketPath(tk), "/upload/t1.", "/upload/t2.", 1),
		"huge":        "/upload/t1." + strings.Repeat("A", 3000) + ".x",
	} {
		if a := e.sendRaw(http.MethodPut, path, "", []byte("x")); a.status != http.StatusForbidden {
			t.Errorf("%s: %d %s", name, a.status, a.raw)
		}
	}
}

func TestTicketCannotBeUsedForAnotherName(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	tk := e.ticket(u, upload.Request{Name: "report.pdf"})
	refusals := map[string]answer{
		"form filename": e.postForm(ticketPath(tk), "", part{field: "file", filename: "evil.exe", data: []byte("MZ")}),
		"form field":    e.postForm(ticketPath(tk), "", part{field: "name", data: []byte("evil.exe")}, part{field: "file", filename: "report.pdf", data: []byte("MZ")}),
		"query":         e.sendRaw(http.MethodPut, ticketPath(tk)+"?name=evil.exe", "", []byte("MZ")),
		"disposition":   e.sendRaw(http.MethodPut, ticketPath(tk), "", []byte("MZ"), "Content-Disposition", `attachment; filename="evil.exe"`),
		"edited claims": e.sendRaw(http.MethodPut, reclaim(t, tk, func(c map[string]any) { c["n"] = "evil.exe" }), "", []byte("MZ")),
	}
	for name, a := range refusals {
		want := []string{`"report.pdf"`}
		if name == "edited claims" {
			want = []string{"not valid"}
		}
		t.Run(name, func(t *testing.T) {
			e.t = t
			e.mustRefuse(a, http.StatusForbidden, u, want...)
		})
	}
	// Refusing a wrong name did not spend the ticket: the right file goes.
	e.t = t
	a := e.postForm(ticketPath(tk), "", part{field: "file", filename: "report.pdf", data: []byte("%PDF")})
	e.mustStore(a, []byte("%PDF"), "report.pdf", "application/pdf")
}

func TestTicketBindsTheFolder(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	first := e.mustStore(e.postForm("/upload", u.token, part{field: "file", filename: "a.txt", data: []byte("a")}), []byte("a"), "a.txt", "text/plain")
	folder := first.Parents[0]
	tk := e.ticket(u, upload.Request{Name: "b.txt", FolderID: "mcp-file://host/" + folder})
	a := e.sendRaw(http.MethodPut, ticketPath(tk)+"?folder_id=1AbCdEfGhIjKlMnOpQrStUvWxYz012345", "", []byte("b"))
	if a.status != http.StatusForbidden || !strings.Contains(a.errMsg, "folder") {
		t.Errorf("other folder: %d %s", a.status, a.raw)
	}
	f := e.mustStore(e.sendRaw(http.MethodPut, ticketPath(tk), "", []byte("b")), []byte("b"), "b.txt", "text/plain")
	if f.Parents[0] != folder {
		t.Errorf("parents = %v, want [%s]", f.Parents, folder)
	}
}

func TestDeclaredDigestOrSizeMismatchCreatesNothing(t *testing.T) {
	big := pattern(2*drive.UploadChunkSize + 3) // past one chunk: a resumable upload
	small := pattern(1000)
	cases := []struct {
		name    string
		data    []byte
		declare upload.Request
		chunked bool // no Content-Length: the size is known only at the end
		status  int
		want    string
	}{
		{"sha256, small", small, upload.Request{SHA256: sha([]byte("other"))}, false, http.StatusUnprocessableEntity, "SHA-256"},
		{"sha256, resumable", big, upload.Request{SHA256: sha(small)}, true, http.StatusUnprocessableEntity, "SHA-256"},
		{"size, by Content-Length", small, upload.Request{Size: new(int64(999))}, false, http.StatusUnprocessableEntity, "not the 999 declared"},
		{"size, shorter, streamed", small, upload.Request{Size: new(int64(1001))}, true, http.StatusUnprocessableEntity, "not the 1001 declared"},
		{"size, longer, streamed", big, upload.Request{Size: new(int64(2 * drive.UploadChunkSize))}, true, http.StatusUnprocessableEntity, "larger than the 8388608 bytes declared"},
		{"size 0, by Content-Length", small, upload.Request{Size: new(int64(0))}, false, http.StatusUnprocessableEntity, "not the 0 declared"},
		{"size 0, streamed", small, upload.Request{Size: new(int64(0))}, true, http.StatusUnprocessableEntity, "larger than the 0 bytes declared"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			u := e.signIn("ann@example.com")
			tc.declare.Name = "data.bin"
			tk := e.ticket(u, tc.declare)
			var body io.Reader = bytes.NewReader(tc.data)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length: chunked encoding
			}
			req, _ := http.NewRequest(http.MethodPut, e.base+ticketPath(tk), body)
			e.mustRefuse(e.do(req), tc.status, u, tc.want)
			if st := e.emu.Stats(); st.UploadsFinished != 0 {
				t.Errorf("%d uploads finished in Drive", st.UploadsFinished)
			}
		})
	}
}

// An empty file can declare its size: 0 is a size, not "unknown".
func TestEmptyFileDeclaredAsZeroBytes(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	tk := e.ticket(u, upload.Request{Name: "empty.txt", Size: new(int64(0)), SHA256: sha(nil)})
	e.mustRefuse(e.sendRaw(http.MethodPut, ticketPath(tk), "", []byte("x")), http.StatusUnprocessableEntity, u, "not the 0 declared")
	e.mustStore(e.sendRaw(http.MethodPut, ticketPath(tk), "", nil), nil, "empty.txt", "text/plain")
}

func TestDeclaredSizeMismatchUpFrontKeepsTheTicket(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	data := pattern(1000)
	tk := e.ticket(u, upload.Request{Name: "data.bin", Size: new(int64(1000)), SHA256: sha(data)})
	e.mustRefuse(e.sendRaw(http.MethodPut, ticketPath(tk), "", data[:999]), http.StatusUnprocessableEntity, u, "still works once")
	e.mustStore(e.sendRaw(http.MethodPut, ticketPath(tk), "", data), data, "data.bin", "application/octet-stream")
}

// TestTicketRefusedForItsSizeStillWorks: an upload refused because the
// file is past the size limit stores nothing, so its URL is not used up,
// whether the length was announced (refused before the body) or the
// body passed the limit while it streamed (refused before Drive finalized
// anything): the same URL then takes a file within the limit.
func TestTicketRefusedForItsSizeStillWorks(t *testing.T) {
	const limit = 100_000
	past := pattern(limit + 1)
	cases := map[string]func(e *env, path string) answer{
		"raw, announced": func(e *env, path string) answer { return e.sendRaw(http.MethodPut, path, "", past) },
		"raw, streamed": func(e *env, path string) answer {
			req, _ := http.NewRequest(http.MethodPut, e.base+path, io.MultiReader(bytes.NewReader(past)))
			return e.do(req)
		},
		"form, announced": func(e *env, path string) answer {
			return e.postForm(path, "", part{field: "file", filename: "a.bin", data: pattern(limit + 90_000)})
		},
		// The form's framing lets its length pass; the file is counted.
		"form, streamed": func(e *env, path string) answer {
			return e.postForm(path, "", part{field: "file", filename: "a.bin", data: past})
		},
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(c *upload.Config) { c.MaxBytes = limit })
			u := e.signIn("ann@example.com")
			path := ticketPath(e.ticket(u, upload.Request{Name: "a.bin"}))
			a := send(e, path)
			e.mustRefuse(a, http.StatusRequestEntityTooLarge, u, "upload limit of 97.7 KiB")
			if strings.Contains(a.errMsg, "used up") {
				t.Errorf("refusal %q says the URL is used up", a.errMsg)
			}
			if st := e.emu.Stats(); st.UploadsFinished != 0 {
				t.Errorf("%d uploads finished past the limit", st.UploadsFinished)
			}
			at := pattern(limit)
			e.mustStore(e.sendRaw(http.MethodPut, path, "", at), at, "a.bin", "application/octet-stream")
			if again := e.sendRaw(http.MethodPut, path, "", at); again.status != http.StatusConflict {
				t.Errorf("third use: %d %s, want 409: the URL stores one file", again.status, again.raw)
			}
		})
	}
}

func TestRequestUploadRefusals(t *testing.T) {
	e := newEnv(t, func(c *upload.Config) { c.MaxBytes = 1 << 20 })
	u := e.signIn("ann@example.com")
	cases := map[string]struct {
		req  upload.Request
		want string
	}{
		"no name":        {upload.Request{Name: "  "}, "name"},
		"bad type":       {upload.Request{Name: "a", MimeType: "pdf"}, "not a MIME type"},
		"type too long":  {upload.Request{Name: "a", MimeType: "application/" + strings.Repeat("x", 244)}, "at most 255"},
		"Google type":    {upload.Request{Name: "a", MimeType: "application/vnd.google-apps.document"}, "Google Docs type"},
		"too large":      {upload.Request{Name: "a", Size: new(int64(1<<20 + 1))}, "The file is 1048577 bytes, larger than this server's upload limit of 1 MiB (1048576 bytes)."},
		"negative size":  {upload.Request{Name: "a", Size: new(int64(-1))}, "not a file size"},
		"bad sha256":     {upload.Request{Name: "a", SHA256: "abc"}, "64 hexadecimal"},
		"bad folder":     {upload.Request{Name: "a", FolderID: "My Folder"}, "not a Drive folder id"},
		"handle, no id":  {upload.Request{Name: "a", FolderID: "mcp-file://host/a/b"}, "not a Drive folder id"},
		"folder, query'": {upload.Request{Name: "a", FolderID: "mcp-file://host/abc?x=1"}, "not a Drive folder id"},
	}
	for name, tc := range cases {
		_, err := e.svc.RequestUpload(context.Background(), u.acct, tc.req)
		var ue *upload.Error
		if !errors.As(err, &ue) || !strings.Contains(ue.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a refusal saying %q", name, err, tc.want)
		}
		if r, ok := refusal.As(err); !ok || r.Text != ue.Error() {
			t.Errorf("%s: the tools would not show %q to the model as it is", name, ue.Error())
		}
	}
	// At the limit is fine.
	if _, err := e.svc.RequestUpload(context.Background(), u.acct, upload.Request{Name: "a", Size: new(int64(1 << 20))}); err != nil {
		t.Errorf("size at the limit: %v", err)
	}
	// Every field at its longest, in the characters JSON spells longest,
	// still makes a ticket (the folder is one drivemail made).
	if _, err := e.emu.Drive().PutFile(u.email, drivesvc.FileSpec{ID: strings.Repeat("F", 128), Name: "Longest", Kind: drivesvc.KindFolder,
		ClientID: "drivemail-test"}); err != nil {
		t.Fatal(err)
	}
	longest := upload.Request{Name: strings.Repeat("&", 251) + ".txt", MimeType: "application/" + strings.Repeat("x", 243),
		Size: new(int64(1 << 20)), SHA256: strings.Repeat("a", 64), FolderID: strings.Repeat("F", 128)}
	if _, err := e.svc.RequestUpload(context.Background(), u.acct, longest); err != nil {
		t.Errorf("the longest request: %v", err)
	}
	if _, err := e.svc.RequestUpload(context.Background(), e.account("", ""), upload.Request{Name: "a"}); err == nil {
		t.Error("an account no one signed in to got a ticket")
	}
}

// bearer adds a drivemail token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// The request_upload tool end to end: an MCP client asks for the URL, a
// shell runs the curl line it returns, and the file is in Drive.
func TestRequestUploadToolThenItsCurlLine(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	dir := t.TempDir()
	data := pattern(123_456)
	if err := os.WriteFile(filepath.Join(dir, "it's Q3.pdf"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "upload-test", Version: "1"}, nil)
	tr := &sdk.StreamableClientTransport{Endpoint: e.base + "/mcp", HTTPClient: &http.Client{Transport: bearer(u.token)}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "request_upload", Arguments: map[string]any{
		"name": "it's Q3.pdf", "size": len(data), "sha256": sha(data)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("request_upload refused: %+v", res.Content)
	}
	js, _ := json.Marshal(res.StructuredContent)
	var tk tools.UploadResult
	if err := json.Unmarshal(js, &tk); err != nil {
		t.Fatal(err)
	}
	if tk.Curl == "" || !strings.HasPrefix(tk.UploadURL, e.base+"/upload/") {
		t.Fatalf("ticket = %+v", tk)
	}
	cmd := exec.Command("sh", "-c", tk.Curl)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", tk.Curl, err, out)
	}
	var r upload.Result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("curl printed %q", out)
	}
	e.mustStore(answer{status: http.StatusCreated, result: r}, data, "it's Q3.pdf", "application/pdf")
	if tk.Handle != "" && tk.Handle != r.Handle {
		t.Errorf("ticket promised %s, upload gave %s", tk.Handle, r.Handle)
	}
	if _, err := url.Parse(r.Handle); err != nil {
		t.Error(err)
	}
	// Run again, the command fails and shows the server's sentence, not
	// only a status code.
	cmd = exec.Command("sh", "-c", tk.Curl)
	cmd.Dir = dir
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already used; each works once") {
		t.Errorf("a second run: %v, printed %q; want a failure that shows the refusal", err, out)
	}
}

// A ticket is spent when its upload starts, so a Drive failure after that
// must not tell the caller to "try again" with the same URL.
func TestTicketFailedInDriveSaysTheURLIsUsedUp(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	data := pattern(1000)
	tk := e.ticket(u, upload.Request{Name: "a.bin"})
	if err := e.emu.InjectFault(emulator.Fault{Method: http.MethodPost, PathPrefix: "/upload/drive/v3/files",
		Status: http.StatusInternalServerError}); err != nil {
		t.Fatal(err)
	}
	e.mustRefuse(e.sendRaw(http.MethodPut, ticketPath(tk), "", data), http.StatusBadGateway, u,
		"nothing was saved", "used up: ask request_upload for a new one")
	again := e.sendRaw(http.MethodPut, ticketPath(tk), "", data)
	if again.status != http.StatusConflict {
		t.Errorf("the same URL again: %d %s, want 409 already used", again.status, again.raw)
	}
	fresh := e.ticket(u, upload.Request{Name: "a.bin"})
	e.mustStore(e.sendRaw(http.MethodPut, ticketPath(fresh), "", data), data, "a.bin", "application/octet-stream")

	// A direct upload has no URL to use up: its refusal says nothing of one.
	if err := e.emu.InjectFault(emulator.Fault{Method: http.MethodPost, PathPrefix: "/upload/drive/v3/files",
		Status: http.StatusInternalServerError}); err != nil {
		t.Fatal(err)
	}
	a := e.sendRaw(http.MethodPost, "/upload?name=b.bin", u.token, data)
	if a.status != http.StatusBadGateway || strings.Contains(a.errMsg, "used up") {
		t.Errorf("direct upload refusal: %d %q", a.status, a.errMsg)
	}
}
