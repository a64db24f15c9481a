package upload_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/clientfile/clientfiletest"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/upload"
)

// Drive's refusals, an upload past MaxDuration, and a Drive that stored
// other bytes than were sent must each reach the user, whichever way the
// file came (POST /upload, or save_to_drive with a Gmail attachment or a
// file from the conversation): as the refusal's kind, a sentence that says
// what to do and carries neither Google's words nor a token, and no file
// left in Drive.

// googleWords is the message of every Google error injected here: Google's
// own words, which no answer passes on.
const googleWords = "Words of Google's that drivemail keeps to itself"

// stall is a Drive that does not answer for a minute, in the emulator's
// nanoseconds: far past the MaxDuration the tests set.
const stall = 60_000_000_000

// uploadRequest is a request of a Drive upload: its one request, or a
// resumable upload's opening and each chunk.
var uploadRequest = emulator.Fault{Method: http.MethodPost, PathPrefix: "/upload/drive/v3/files"}

// onUpload answers the next upload request with Google's error.
func onUpload(status int, reason string) emulator.Fault {
	f := uploadRequest
	f.Status, f.Reason, f.Message = status, reason, googleWords
	return f
}

// after lets n upload requests through, then applies f: a resumable
// upload's opening and first chunk, then f on its second chunk. (A fault
// must do something, and a nanosecond's delay is nothing.)
func after(n int, f emulator.Fault) []emulator.Fault {
	pass := uploadRequest
	pass.Delay = 1
	faults := make([]emulator.Fault, 0, n+1)
	for range n {
		faults = append(faults, pass)
	}
	return append(faults, f)
}

// told is what the user was told of a refused upload or save.
type told struct {
	kind       string // the refusal's kind, as the service logged it
	status     int
	text       string // the sentence the user reads
	all        string // all the answer carried
	retryAfter string // Retry-After in seconds; "" for none
}

// via is one way a user puts data into Drive: into folder, a folder_id,
// or into drivemail's uploads folder when folder is "".
type via struct {
	name string
	put  func(e *env, host *clientfiletest.Host, u user, data []byte, folder string) told
}

var vias = []via{
	{"POST /upload", func(e *env, _ *clientfiletest.Host, u user, data []byte, folder string) told {
		path := "/upload?name=report.bin"
		if folder != "" {
			path += "&folder_id=" + folder
		}
		a := e.sendRaw(http.MethodPost, path, u.token, data)
		var h strings.Builder
		_ = a.header.Write(&h)
		return told{kind: e.loggedRefusal("upload refused", u), status: a.status, text: a.errMsg, all: h.String() + a.raw,
			retryAfter: a.header.Get("Retry-After")}
	}},
	{"save_to_drive, a Gmail attachment", func(e *env, _ *clientfiletest.Host, u user, data []byte, folder string) told {
		_, err := e.svc.Save(context.Background(), u.acct, upload.SaveFile{Name: "report.bin", Size: int64(len(data)), FolderID: folder}, func(context.Context) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		})
		return e.saveTold(u, err)
	}},
	{"save_to_drive, a file from the conversation", func(e *env, host *clientfiletest.Host, u user, data []byte, folder string) told {
		host.Handle("/report.bin", clientfiletest.Serve(data, "application/octet-stream", ""))
		_, err := e.svc.SaveClientFile(context.Background(), u.acct, upload.SaveRequest{URL: host.URL("", "/report.bin?sig=x"), FolderID: folder})
		return e.saveTold(u, err)
	}},
}

// saveTold is what save_to_drive tells of a refused save.
func (e *env) saveTold(u user, err error) told {
	e.t.Helper()
	var ue *upload.Error
	if !errors.As(err, &ue) {
		e.t.Fatalf("save: %v, want a refusal", err)
	}
	got := told{kind: e.loggedRefusal("save refused", u), status: ue.Status, text: ue.Text, all: ue.Text}
	if string(ue.Kind) != got.kind {
		e.t.Errorf("the refusal is %s, the log says %s", ue.Kind, got.kind)
	}
	if ue.RetryAfter > 0 {
		got.retryAfter = strconv.Itoa(int(ue.RetryAfter / time.Second))
	}
	return got
}

var refusalAttr = regexp.MustCompile(` refusal=(\S+)`)

// loggedRefusal is the kind of u's last refusal, from the log line msg.
func (e *env) loggedRefusal(msg string, u user) string {
	e.t.Helper()
	kind := ""
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, `msg="`+msg+`"`) && strings.Contains(line, " user="+u.id+" ") {
			if m := refusalAttr.FindStringSubmatch(line); m != nil {
				kind = m[1]
			}
		}
	}
	if kind == "" {
		e.t.Fatalf("no %q line with a refusal for %s; logs:\n%s", msg, u.id, e.logs.String())
	}
	return kind
}

// mustTell checks what u was told: the refusal's kind and status, a
// sentence that says each of says, and nothing of Google's words or of a
// token in the answer or the log.
func (e *env) mustTell(got told, u user, kind string, status int, says ...string) {
	e.t.Helper()
	if got.kind != kind || got.status != status {
		e.t.Errorf("refused as %s with %d (%q), want %s with %d", got.kind, got.status, got.text, kind, status)
	}
	for _, s := range says {
		if !strings.Contains(got.text, s) {
			e.t.Errorf("the sentence %q does not say %q", got.text, s)
		}
	}
	for _, secret := range []string{googleWords, "ya29.", "1//", u.token} {
		if strings.Contains(got.all, secret) {
			e.t.Errorf("the answer carries %q: %s", secret, got.all)
		}
		if strings.Contains(e.logs.String(), secret) {
			e.t.Errorf("the log carries %q", secret)
		}
	}
}

// pendingFaults is how many injected faults no request has met yet.
func (e *env) pendingFaults() int {
	e.t.Helper()
	resp, err := e.hc.Get(e.google.URL + "/_emulator/faults")
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var faults []emulator.Fault
	if err := json.NewDecoder(resp.Body).Decode(&faults); err != nil {
		e.t.Fatal(err)
	}
	return len(faults)
}

// mustLeaveNothing checks that Drive holds no file of u's and finished no
// upload; a resumable upload's session was open, with bytes in it.
func (e *env) mustLeaveNothing(u user, resumable bool) {
	e.t.Helper()
	if n := len(e.files(u)); n != 0 {
		e.t.Errorf("%d files in Drive after the refusal", n)
	}
	st := e.emu.Stats()
	if st.UploadsFinished != 0 {
		e.t.Errorf("Drive finished %d uploads", st.UploadsFinished)
	}
	if resumable && st.UploadsStarted != 1 {
		e.t.Errorf("Drive opened %d upload sessions, want the 1 refused part-way", st.UploadsStarted)
	}
	if n := e.pendingFaults(); n != 0 {
		e.t.Errorf("%d faults were never met: the refusal came from elsewhere", n)
	}
}

// TestDriveRefusalsSayWhatToDo: a full Drive, a refused token or scope,
// Drive's rate limits, its limits on how many files an account, a folder
// or a shared drive may hold, a Workspace policy, the project's daily
// quota and a refusal drivemail does not know, on the one request of a
// small upload or part-way through a resumable one, each tell the user
// what they (or whoever runs drivemail) can do, and leave no file. The
// reasons are those of Drive's guides to its errors and limits
// (developers.google.com/workspace/drive/api/guides/handle-errors,
// /limits). Only a refused token or scope sends the user to sign in
// again, and only a rate limit to try again in a minute.
func TestDriveRefusalsSayWhatToDo(t *testing.T) {
	small, large := pattern(100_000), pattern(2*chunk+1000)
	full := []string{"Your Google Drive is full", "Free some space in Drive, then upload again"}
	denied := []string{"Google refused drivemail access to your Drive", "Reconnect drivemail (sign in again)"}
	limited := []string{"Google Drive is limiting how fast files can be added", "nothing was saved", "Try again in a minute"}
	tooManyItems := []string{"as many files as Google Drive lets one account create", "nothing was saved",
		"Delete files you no longer need from Drive and empty its trash (files in the trash count too), then upload again"}
	uploadsFolderFull := []string{`The "drivemail uploads" folder holds as many files as Google Drive allows in one folder`, "nothing was saved",
		"Move some of its files to another folder in Drive, then upload again"}
	folderFull := []string{"The folder given as folder_id holds as many files as Google Drive allows in one folder", "nothing was saved",
		`Choose another folder as folder_id, or leave folder_id out to use the "drivemail uploads" folder`}
	sharedDriveFull := []string{"The shared drive that holds the folder given as folder_id holds as many files as Google Drive allows", "nothing was saved",
		`Choose a folder outside that shared drive as folder_id, or leave folder_id out to use the "drivemail uploads" folder`}
	policy := []string{"Your Workspace administrator's policy does not let drivemail add files to your Google Drive", "nothing was saved",
		"Ask your administrator to allow drivemail"}
	dailyQuota := []string{"drivemail has used up its daily Google Drive quota, which all its users share", "nothing was saved",
		"Google resets it within a day", "whoever runs drivemail"}
	refused := []string{"Google Drive refused to store the file for this account", "nothing was saved",
		"Try again later; if it keeps failing, tell whoever runs drivemail"}
	cases := []struct {
		name       string
		data       []byte
		inFolder   bool // folder_id names a folder drivemail made
		faults     []emulator.Fault
		prepare    func(e *env, u user)
		kind       string
		status     int
		says       []string
		retryAfter string
		operator   bool // logged at ERROR with what whoever runs drivemail must do
	}{
		{name: "403 storageQuotaExceeded", data: small, faults: []emulator.Fault{onUpload(403, "storageQuotaExceeded")},
			kind: "drive_full", status: http.StatusInsufficientStorage, says: full},
		{name: "403 storageQuotaExceeded on a chunk", data: large, faults: after(2, onUpload(403, "storageQuotaExceeded")),
			kind: "drive_full", status: http.StatusInsufficientStorage, says: full},
		// Drive's reason for a full Drive has also been quotaExceeded.
		{name: "403 quotaExceeded", data: small, faults: []emulator.Fault{onUpload(403, "quotaExceeded")},
			kind: "drive_full", status: http.StatusInsufficientStorage, says: full},
		{name: "403 quotaExceeded on a chunk", data: large, faults: after(2, onUpload(403, "quotaExceeded")),
			kind: "drive_full", status: http.StatusInsufficientStorage, says: full},
		{name: "403 activeItemCreationLimitExceeded", data: small, faults: []emulator.Fault{onUpload(403, "activeItemCreationLimitExceeded")},
			kind: "drive_full", status: http.StatusInsufficientStorage, says: tooManyItems},
		{name: "403 numChildrenInNonRootLimitExceeded", data: small, faults: []emulator.Fault{onUpload(403, "numChildrenInNonRootLimitExceeded")},
			kind: "folder_full", status: http.StatusInsufficientStorage, says: uploadsFolderFull},
		{name: "403 numChildrenInNonRootLimitExceeded, folder_id", data: small, inFolder: true, faults: []emulator.Fault{onUpload(403, "numChildrenInNonRootLimitExceeded")},
			kind: "folder_full", status: http.StatusInsufficientStorage, says: folderFull},
		{name: "403 teamDriveFileLimitExceeded, folder_id", data: small, inFolder: true, faults: []emulator.Fault{onUpload(403, "teamDriveFileLimitExceeded")},
			kind: "folder_full", status: http.StatusInsufficientStorage, says: sharedDriveFull},
		{name: "403 domainPolicy", data: small, faults: []emulator.Fault{onUpload(403, "domainPolicy")},
			kind: "drive_domain_policy", status: http.StatusForbidden, says: policy},
		{name: "403 dailyLimitExceeded", data: small, faults: []emulator.Fault{onUpload(403, "dailyLimitExceeded")},
			kind: "drive_daily_quota", status: http.StatusServiceUnavailable, says: dailyQuota, operator: true},
		{name: "403 dailyLimitExceeded on a chunk", data: large, faults: after(2, onUpload(403, "dailyLimitExceeded")),
			kind: "drive_daily_quota", status: http.StatusServiceUnavailable, says: dailyQuota, operator: true},
		// A 403 whose reason drivemail does not know, and one it knows
		// only for downloads: neither is the token's or the scope's.
		{name: "403 an unknown reason", data: small, faults: []emulator.Fault{onUpload(403, "somethingNew")},
			kind: "drive_failed", status: http.StatusBadGateway, says: refused},
		{name: "403 forbidden", data: small, faults: []emulator.Fault{onUpload(403, "forbidden")},
			kind: "drive_failed", status: http.StatusBadGateway, says: refused},
		{name: "403 downloadQuotaExceeded", data: small, faults: []emulator.Fault{onUpload(403, "downloadQuotaExceeded")},
			kind: "drive_failed", status: http.StatusBadGateway, says: refused},
		{name: "403 insufficientPermissions", data: small, faults: []emulator.Fault{onUpload(403, "insufficientPermissions")},
			kind: "drive_denied", status: http.StatusForbidden, says: denied},
		{name: "401 authError", data: small, faults: []emulator.Fault{onUpload(401, "authError")},
			kind: "drive_denied", status: http.StatusForbidden, says: denied},
		// Not a fault: the user removed drivemail's access at Google, whose
		// Drive answers 401 to the token drivemail still holds.
		{name: "access removed at Google", data: small, prepare: func(e *env, u user) { e.emu.RemoveAccess(u.email) },
			kind: "drive_denied", status: http.StatusForbidden, says: denied},
		{name: "429 rateLimitExceeded", data: small, faults: []emulator.Fault{onUpload(429, "rateLimitExceeded")},
			kind: "drive_rate_limited", status: http.StatusServiceUnavailable, says: limited, retryAfter: "60"},
		{name: "403 rateLimitExceeded", data: small, faults: []emulator.Fault{onUpload(403, "rateLimitExceeded")},
			kind: "drive_rate_limited", status: http.StatusServiceUnavailable, says: limited, retryAfter: "60"},
		{name: "403 userRateLimitExceeded", data: small, faults: []emulator.Fault{onUpload(403, "userRateLimitExceeded")},
			kind: "drive_rate_limited", status: http.StatusServiceUnavailable, says: limited, retryAfter: "60"},
		// A 429 on a chunk is retried (by Google's client); a 403 is not.
		{name: "403 userRateLimitExceeded on a chunk", data: large, faults: after(2, onUpload(403, "userRateLimitExceeded")),
			kind: "drive_rate_limited", status: http.StatusServiceUnavailable, says: limited, retryAfter: "60"},
	}
	for _, tt := range cases {
		for _, v := range vias {
			t.Run(tt.name+"/"+v.name, func(t *testing.T) {
				e, host := saveEnv(t)
				u := e.signIn("ann@example.com")
				folder := ""
				if tt.inFolder {
					f, err := e.emu.Drive().PutFile(u.email, drivesvc.FileSpec{Name: "Reports", Kind: drivesvc.KindFolder, ClientID: "drivemail-test"})
					if err != nil {
						t.Fatal(err)
					}
					folder = f.ID
				}
				for _, f := range tt.faults {
					if err := e.emu.InjectFault(f); err != nil {
						t.Fatal(err)
					}
				}
				if tt.prepare != nil {
					tt.prepare(e, u)
				}
				got := v.put(e, host, u, tt.data, folder)
				e.mustTell(got, u, tt.kind, tt.status, tt.says...)
				for _, f := range tt.faults {
					if f.Reason != "" && strings.Contains(got.all, f.Reason) {
						t.Errorf("the answer names Google's reason %s", f.Reason)
					}
					// Whoever is told of a refusal that keeps coming
					// finds Drive's reason in the log.
					if line := e.refusedLine(u); f.Reason != "" && !strings.Contains(line, f.Reason) {
						t.Errorf("the refusal's log line does not name Drive's reason %s: %s", f.Reason, line)
					}
				}
				if tt.kind != "drive_denied" && strings.Contains(got.text, "sign in again") {
					t.Errorf("the sentence sends the user to sign in again, which changes nothing: %q", got.text)
				}
				if tt.retryAfter == "" && strings.Contains(got.text, "in a minute") {
					t.Errorf("the sentence says to try again in a minute, which would meet the same refusal: %q", got.text)
				}
				if got.retryAfter != tt.retryAfter {
					t.Errorf("Retry-After %q, want %q", got.retryAfter, tt.retryAfter)
				}
				if told := e.operatorTold(u); told != tt.operator {
					t.Errorf("an ERROR line with operator= for the refusal: %v, want %v; logs:\n%s", told, tt.operator, e.logs.String())
				}
				e.mustLeaveNothing(u, len(tt.data) > chunk)
			})
		}
	}
}

// refusedLine is the last "upload refused" or "save refused" line of u's.
func (e *env) refusedLine(u user) string {
	last := ""
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, " refused\"") && strings.Contains(line, " user="+u.id+" ") {
			last = line
		}
	}
	return last
}

// operatorTold reports whether u's refusal was logged at ERROR with what
// whoever runs drivemail must do (operator=).
func (e *env) operatorTold(u user) bool {
	line := e.refusedLine(u)
	return strings.Contains(line, "level=ERROR") && strings.Contains(line, " operator=")
}

// TestDriveTooSlowTookTooLong: a Drive that stops answering, on a small
// upload's one request or part-way through a resumable one, is given up
// at MaxDuration; the user is told the upload took too long, and Drive
// keeps nothing.
func TestDriveTooSlowTookTooLong(t *testing.T) {
	slow := uploadRequest
	slow.Delay = stall
	cases := []struct {
		name   string
		data   []byte
		faults []emulator.Fault
	}{
		{"the one request", pattern(100_000), []emulator.Fault{slow}},
		{"the second chunk", pattern(2*chunk + 1000), after(2, slow)},
	}
	for _, tt := range cases {
		for _, v := range vias {
			t.Run(tt.name+"/"+v.name, inBubble(func(t *testing.T) {
				e, host := saveBubbleEnv(t, func(c *upload.Config) { c.MaxDuration = time.Second })
				u := e.signIn("ann@example.com")
				for _, f := range tt.faults {
					if err := e.emu.InjectFault(f); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Now()
				got := v.put(e, host, u, tt.data, "")
				if d := time.Since(start); d > 20*time.Second {
					t.Errorf("refused after %v, with a MaxDuration of 1s", d)
				}
				e.mustTell(got, u, "took_too_long", http.StatusRequestTimeout, "took longer than 1 second", "nothing was saved")
				e.mustLeaveNothing(u, len(tt.data) > chunk)
			}))
		}
	}
}

// tamperingDrive stands between the upload service and the emulated
// Google, in the transport of the service's Google clients: drivemail's
// Google transport sends a token to its configured endpoint only, so a
// proxy on another port would be refused it. change rewrites what Drive
// says it stored, in its answer to an upload's last request (the one that
// returns the file); failDelete answers files.delete with a 500.
func tamperingDrive(change func(file map[string]any), failDelete bool) func(account.Tokens) account.Tokens {
	return func(tokens account.Tokens) account.Tokens {
		return tamperingClients{Tokens: tokens, change: change, failDelete: failDelete}
	}
}

type tamperingClients struct {
	account.Tokens
	change     func(file map[string]any)
	failDelete bool
}

func (c tamperingClients) Client(ctx context.Context, userID string) (*http.Client, error) {
	hc, err := c.Tokens.Client(ctx, userID)
	if err != nil {
		return nil, err
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out := *hc
	out.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
		if c.failDelete && r.Method == http.MethodDelete {
			body := `{"error":{"code":500,"message":"Internal Error","errors":[{"domain":"global","reason":"backendError","message":"Internal Error"}]}}`
			return &http.Response{StatusCode: http.StatusInternalServerError, Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r}, nil
		}
		resp, err := next.RoundTrip(r)
		if err != nil || r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/upload/drive/v3/files") || resp.StatusCode != http.StatusOK {
			return resp, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		var file map[string]any
		if err := json.Unmarshal(body, &file); err == nil && file["id"] != nil {
			c.change(file)
			body, _ = json.Marshal(file)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return resp, nil
	})
	return &out, nil
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDriveStoringOtherBytesRemovesTheFile: when Drive says it stored
// another size or SHA-256 than was sent, the file is deleted and the user
// is told to upload again.
func TestDriveStoringOtherBytesRemovesTheFile(t *testing.T) {
	small, large := pattern(100_000), pattern(2*chunk+1000)
	otherSum := func(f map[string]any) { f["sha256Checksum"] = sha([]byte("other bytes")) }
	cases := []struct {
		name   string
		data   []byte
		change func(map[string]any)
	}{
		{"another SHA-256", small, otherSum},
		{"another size", small, func(f map[string]any) { f["size"] = strconv.Itoa(len(small) - 1) }},
		{"another SHA-256, resumable", large, otherSum},
	}
	for _, tt := range cases {
		for _, v := range vias {
			t.Run(tt.name+"/"+v.name, func(t *testing.T) {
				e, host := saveEnvOver(t, tamperingDrive(tt.change, false))
				u := e.signIn("ann@example.com")
				got := v.put(e, host, u, tt.data, "")
				e.mustTell(got, u, "drive_mismatch", http.StatusBadGateway, "stored something other than the bytes sent", "the file was removed", "Try the upload again")
				if n := len(e.files(u)); n != 0 {
					t.Errorf("%d files stand in Drive", n)
				}
				if st := e.emu.Stats(); st.UploadsFinished != 1 {
					t.Errorf("Drive finished %d uploads, want the 1 it was sent", st.UploadsFinished)
				}
			})
		}
	}
}

// TestDriveMismatchNotRemovedSaysSo: a file Drive stored wrongly that
// cannot then be deleted is not said to be removed: the user is told to
// delete it, by name, and the operator's log says so.
func TestDriveMismatchNotRemovedSaysSo(t *testing.T) {
	data := pattern(100_000)
	for _, v := range vias {
		t.Run(v.name, func(t *testing.T) {
			e, host := saveEnvOver(t, tamperingDrive(func(f map[string]any) { f["sha256Checksum"] = sha(nil) }, true))
			u := e.signIn("ann@example.com")
			got := v.put(e, host, u, data, "")
			e.mustTell(got, u, "drive_mismatch", http.StatusBadGateway, "stored something other than the bytes sent", `delete "report.bin" from your Drive`)
			if strings.Contains(got.text, "was removed") {
				t.Errorf("the sentence says the file was removed: %q", got.text)
			}
			if n := len(e.files(u)); n != 1 {
				t.Errorf("%d files in Drive, want the 1 that could not be deleted", n)
			}
			if !strings.Contains(e.logs.String(), "could not delete a file Drive stored wrongly") {
				t.Errorf("the log does not say the file stands:\n%s", e.logs.String())
			}
		})
	}
}

// trickle yields data a piece at a time, a pause before each, until its
// context ends: a slow source, or a slow client's body.
type trickle struct {
	ctx  context.Context
	data []byte
}

func (tr *trickle) Read(p []byte) (int, error) {
	if len(tr.data) == 0 {
		return 0, io.EOF
	}
	select {
	case <-tr.ctx.Done():
		return 0, tr.ctx.Err()
	case <-time.After(10 * time.Millisecond):
	}
	n := copy(p[:min(len(p), 32<<10)], tr.data)
	tr.data = tr.data[n:]
	return n, nil
}

// TestStillArrivingTookTooLong: a file that keeps arriving, steadily
// enough never to be too slow, is cut at MaxDuration, and the user is
// told it took too long, not that it stalled or failed at its source.
func TestStillArrivingTookTooLong(t *testing.T) {
	data := pattern(2 * chunk) // 3 MiB a second: the deadline falls in its first chunk
	cases := []struct {
		name string
		put  func(e *env, host *clientfiletest.Host, u user) told
	}{
		{"POST /upload", func(e *env, _ *clientfiletest.Host, u user) told {
			req, _ := http.NewRequest(http.MethodPost, e.base+"/upload?name=report.bin", &trickle{ctx: e.t.Context(), data: data})
			req.Header.Set("Authorization", "Bearer "+u.token)
			a := e.do(req)
			return told{kind: e.loggedRefusal("upload refused", u), status: a.status, text: a.errMsg, all: a.raw}
		}},
		{"save_to_drive, a Gmail attachment", func(e *env, _ *clientfiletest.Host, u user) told {
			_, err := e.svc.Save(context.Background(), u.acct, upload.SaveFile{Name: "report.bin", Size: int64(len(data))}, func(ctx context.Context) (io.ReadCloser, error) {
				return io.NopCloser(&trickle{ctx: ctx, data: data}), nil
			})
			return e.saveTold(u, err)
		}},
		{"save_to_drive, a file from the conversation", func(e *env, host *clientfiletest.Host, u user) told {
			host.Handle("/report.bin", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Header().Set("Content-Length", strconv.Itoa(len(data)))
				src := &trickle{ctx: r.Context(), data: data}
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					if _, werr := w.Write(buf[:n]); werr != nil || err != nil {
						return
					}
					w.(http.Flusher).Flush()
				}
			})
			_, err := e.svc.SaveClientFile(context.Background(), u.acct, upload.SaveRequest{URL: host.URL("", "/report.bin")})
			return e.saveTold(u, err)
		}},
	}
	for _, tt := range cases {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			e, host := saveBubbleEnv(t, func(c *upload.Config) { c.MaxDuration = 500 * time.Millisecond })
			u := e.signIn("ann@example.com")
			e.mustTell(tt.put(e, host, u), u, "took_too_long", http.StatusRequestTimeout, "took longer than 500ms", "nothing was saved")
			e.mustLeaveNothing(u, false)
		}))
	}
}

// TestRequestUploadFolderRefusals: request_upload asks Drive about a
// folder_id before it issues a URL. Drive's refusals there say what the
// user can do, as an upload's do, and the project's daily quota reaches
// whoever runs drivemail as an ERROR line: the tool's own line is INFO.
func TestRequestUploadFolderRefusals(t *testing.T) {
	cases := []struct {
		reason, kind, says string
		operator           bool
	}{
		{"dailyLimitExceeded", "drive_daily_quota", "ask whoever runs drivemail to raise the quota", true},
		{"domainPolicy", "drive_domain_policy", "Your Workspace administrator's policy does not let drivemail add files", false},
		{"somethingNew", "drive_failed", "Google Drive refused to store the file for this account", false},
	}
	for _, tt := range cases {
		t.Run(tt.reason, func(t *testing.T) {
			e := newEnv(t)
			u := e.signIn("ann@example.com")
			f, err := e.emu.Drive().PutFile(u.email, drivesvc.FileSpec{Name: "Reports", Kind: drivesvc.KindFolder, ClientID: "drivemail-test"})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.emu.InjectFault(emulator.Fault{Method: http.MethodGet, PathPrefix: "/drive/v3/files/" + f.ID,
				Status: 403, Reason: tt.reason, Message: googleWords}); err != nil {
				t.Fatal(err)
			}
			_, err = e.svc.RequestUpload(context.Background(), u.acct, upload.Request{Name: "report.bin", FolderID: f.ID})
			var ue *upload.Error
			if !errors.As(err, &ue) || string(ue.Kind) != tt.kind || !strings.Contains(ue.Text, tt.says) {
				t.Fatalf("request_upload: %v, want %s saying %q", err, tt.kind, tt.says)
			}
			for _, never := range []string{"sign in again", "in a minute", googleWords, tt.reason} {
				if strings.Contains(ue.Text, never) {
					t.Errorf("the sentence says %q: %q", never, ue.Text)
				}
			}
			if told := e.operatorTold(u); told != tt.operator {
				t.Errorf("an ERROR line with operator=: %v, want %v; logs:\n%s", told, tt.operator, e.logs.String())
			}
			if strings.Contains(e.logs.String(), googleWords) {
				t.Error("the log carries Google's words")
			}
			if n := e.pendingFaults(); n != 0 {
				t.Errorf("%d faults were never met: the refusal came from elsewhere", n)
			}
		})
	}
}
