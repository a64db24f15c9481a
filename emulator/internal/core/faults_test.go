package core

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func faultServer(t *testing.T, f *Faults, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(f.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, body)
	})))
	t.Cleanup(srv.Close)
	return srv
}

func ptr(n int64) *int64 { return &n }

func TestFaultStatusAppliesTimesThenStops(t *testing.T) {
	var f Faults
	srv := faultServer(t, &f, "ok")
	if err := f.Add(Fault{PathPrefix: "/upload/", Status: 503, Times: 2}); err != nil {
		t.Fatal(err)
	}
	want := []int{503, 503, 200}
	for i, code := range want {
		resp, err := http.Post(srv.URL+"/upload/x", "text/plain", strings.NewReader("abc"))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Fatalf("request %d: status %d, want %d (%s)", i, resp.StatusCode, code, b)
		}
		if code == 503 && !strings.Contains(string(b), `"reason": "backendError"`) {
			t.Errorf("injected error is not Google-shaped: %s", b)
		}
	}
}

func TestFaultMatchesMethodAndPrefixOnly(t *testing.T) {
	var f Faults
	srv := faultServer(t, &f, "ok")
	if err := f.Add(Fault{Method: "PUT", PathPrefix: "/a", Status: 500}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ method, path string }{{"GET", "/a"}, {"PUT", "/b"}} {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s %s: status %d, want 200 (rule must not match)", tc.method, tc.path, resp.StatusCode)
		}
	}
	if n := len(f.Pending()); n != 1 {
		t.Errorf("pending rules = %d, want 1 (unused)", n)
	}
}

func TestFaultCutResponseAfterBytes(t *testing.T) {
	var f Faults
	body := strings.Repeat("x", 10000)
	srv := faultServer(t, &f, body)
	if err := f.Add(Fault{PathPrefix: "/d", CutResponseAfter: ptr(1000)}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.URL + "/d")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil {
		t.Fatalf("read %d bytes without error; want the connection cut", len(got))
	}
	if len(got) != 1000 {
		t.Errorf("got %d bytes before the cut, want 1000", len(got))
	}
}

func TestFaultCutRequestAfterBytes(t *testing.T) {
	var f Faults
	srv := faultServer(t, &f, "ok")
	if err := f.Add(Fault{PathPrefix: "/u", CutRequestAfter: ptr(10)}); err != nil {
		t.Fatal(err)
	}
	_, err := http.Post(srv.URL+"/u", "text/plain", strings.NewReader(strings.Repeat("y", 1<<20)))
	if err == nil {
		t.Fatal("request succeeded; want the connection cut")
	}
	resp, err := http.Post(srv.URL+"/u", "text/plain", strings.NewReader("z"))
	if err != nil {
		t.Fatalf("second request: %v (the rule should be used up)", err)
	}
	resp.Body.Close()
}

func TestFaultDelay(t *testing.T) {
	var f Faults
	srv := faultServer(t, &f, "ok")
	if err := f.Add(Fault{PathPrefix: "/", Delay: Duration(150 * time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := http.Get(srv.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("answered after %v, want at least the 150ms delay", el)
	}
}

func TestFaultControlsAreNeverFaulted(t *testing.T) {
	var f Faults
	srv := faultServer(t, &f, "ok")
	if err := f.Add(Fault{PathPrefix: "/", Status: 500, Times: 5}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.URL + "/_emulator/stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/_emulator/ answered %d; controls must stay reachable", resp.StatusCode)
	}
}

func TestFaultAddRejectsBadRules(t *testing.T) {
	var f Faults
	for _, tc := range []struct {
		name string
		rule Fault
	}{
		{"no prefix", Fault{Status: 500}},
		{"relative prefix", Fault{PathPrefix: "x", Status: 500}},
		{"no effect", Fault{PathPrefix: "/x"}},
		{"success status", Fault{PathPrefix: "/x", Status: 200}},
		{"status over 599", Fault{PathPrefix: "/x", Status: 600}},
		{"negative cut_response_after", Fault{PathPrefix: "/x", CutResponseAfter: ptr(-1)}},
		{"negative cut_request_after", Fault{PathPrefix: "/x", CutRequestAfter: ptr(-1)}},
		{"negative delay", Fault{PathPrefix: "/x", Delay: Duration(-time.Second)}},
		{"negative times", Fault{PathPrefix: "/x", Status: 500, Times: -2}},
		{"reason without status", Fault{PathPrefix: "/x", Delay: Duration(time.Second), Reason: "domainPolicy"}},
		{"message without status", Fault{PathPrefix: "/x", CutResponseAfter: ptr(1), Message: "no"}},
		{"reason with a space", Fault{PathPrefix: "/x", Status: 403, Reason: "domain policy"}},
		{"reason with a quote", Fault{PathPrefix: "/x", Status: 403, Reason: `a"b`}},
		{"reason starting with a digit", Fault{PathPrefix: "/x", Status: 403, Reason: "4xx"}},
		{"reason of 65 characters", Fault{PathPrefix: "/x", Status: 403, Reason: strings.Repeat("r", 65)}},
		{"message with a newline", Fault{PathPrefix: "/x", Status: 403, Message: "one\ntwo"}},
		{"message not UTF-8", Fault{PathPrefix: "/x", Status: 403, Message: "caf\xe9"}},
		{"message of 301 characters", Fault{PathPrefix: "/x", Status: 403, Message: strings.Repeat("é", 301)}},
		{"end_session with a 400, which ends it anyway", Fault{PathPrefix: "/x", Status: 400, EndSession: true}},
		{"end_session with a 503", Fault{PathPrefix: "/x", Status: 503, EndSession: true}},
		{"end_session without a status", Fault{PathPrefix: "/x", Delay: 1, EndSession: true}},
	} {
		if err := f.Add(tc.rule); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestDurationJSON(t *testing.T) {
	var d Duration
	if err := d.UnmarshalJSON([]byte(`"250ms"`)); err != nil || time.Duration(d) != 250*time.Millisecond {
		t.Fatalf("got %v, %v", time.Duration(d), err)
	}
	if err := d.UnmarshalJSON([]byte(`"soon"`)); err == nil {
		t.Error("accepted a non-duration")
	}
	b, _ := d.MarshalJSON()
	if string(b) != `"250ms"` {
		t.Errorf("marshal = %s", b)
	}
}

func TestFaultCutResponseAfterZero(t *testing.T) {
	var f Faults
	srv := faultServer(t, &f, "hello")
	if err := f.Add(Fault{PathPrefix: "/d", CutResponseAfter: ptr(0)}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.URL + "/d")
	if err != nil {
		return // cut before the status line went out
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || len(got) != 0 {
		t.Errorf("read %q, err %v; want nothing and a cut connection", got, err)
	}
}

func TestFaultsPendingAreBounded(t *testing.T) {
	var f Faults
	for i := range MaxFaults {
		if err := f.Add(Fault{PathPrefix: "/x", Status: 500}); err != nil {
			t.Fatalf("rule %d of %d refused: %v", i+1, MaxFaults, err)
		}
	}
	err := f.Add(Fault{PathPrefix: "/x", Status: 500})
	if err == nil || !strings.Contains(err.Error(), "DELETE /_emulator/faults") {
		t.Fatalf("rule %d: err %v, want a refusal that says how to clear them", MaxFaults+1, err)
	}
	f.Clear()
	if err := f.Add(Fault{PathPrefix: "/x", Status: 500}); err != nil {
		t.Errorf("after Clear: %v", err)
	}
}

// TestFaultReasonAndMessage: a status fault carries the reason and
// message given, in Google's error shape, up to their limits; without
// them, the defaults.
func TestFaultReasonAndMessage(t *testing.T) {
	var f Faults
	srv := faultServer(t, &f, "ok")
	longReason, longMessage := "r"+strings.Repeat("9", 63), strings.Repeat("é", 300)
	tests := []struct {
		rule                Fault
		wantReason, wantMsg string
	}{
		{Fault{Status: 403, Reason: "cannotDownloadAbusiveFile", Message: "This file has been identified as malware or spam."},
			"cannotDownloadAbusiveFile", "This file has been identified as malware or spam."},
		{Fault{Status: 403, Reason: longReason, Message: longMessage}, longReason, longMessage},
		{Fault{Status: 403, Reason: "domainPolicy"}, "domainPolicy", "Injected fault: Forbidden"},
		{Fault{Status: 429, Message: "Slow down."}, "rateLimitExceeded", "Slow down."},
		{Fault{Status: 403}, "forbidden", "Injected fault: Forbidden"},
	}
	for _, tt := range tests {
		tt.rule.PathPrefix = "/drive/"
		if err := f.Add(tt.rule); err != nil {
			t.Fatalf("%+v: %v", tt.rule, err)
		}
		resp, err := http.Get(srv.URL + "/drive/v3/files/x?alt=media")
		if err != nil {
			t.Fatal(err)
		}
		var body ErrorBody
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != tt.rule.Status || body.Error.Code != tt.rule.Status {
			t.Fatalf("%+v: %d %+v (%v)", tt.rule, resp.StatusCode, body, err)
		}
		if body.Error.Message != tt.wantMsg || len(body.Error.Errors) != 1 ||
			body.Error.Errors[0].Reason != tt.wantReason || body.Error.Errors[0].Message != tt.wantMsg {
			t.Errorf("%+v: error %+v, want reason %q and message %q", tt.rule, body.Error, tt.wantReason, tt.wantMsg)
		}
	}
}

// TestFaultJSONNames: the names POST /_emulator/faults reads.
func TestFaultJSONNames(t *testing.T) {
	var got Fault
	dec := json.NewDecoder(strings.NewReader(`{"path_prefix":"/drive/","method":"GET","times":2,"status":403,"reason":"domainPolicy","message":"Not here.","delay":"5ms"}`))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := Fault{PathPrefix: "/drive/", Method: "GET", Times: 2, Status: 403, Reason: "domainPolicy", Message: "Not here.", Delay: Duration(5 * time.Millisecond)}
	if got != want {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}

// TestFaultSignInPageAndServiceDisabled: the two canned Google answers
// replace the handler's, the sign-in page as 200 text/html, the disabled
// API as 403 naming the API of the path; each needs nothing else set.
func TestFaultSignInPageAndServiceDisabled(t *testing.T) {
	f := Faults{Project: func(*http.Request) string { return "123456789012" }}
	srv := faultServer(t, &f, "the file")
	for _, r := range []Fault{
		{PathPrefix: "/drive/v3/files/", SignInPage: true},
		{PathPrefix: "/v4/spreadsheets", ServiceDisabled: true},
	} {
		if err := f.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	res, err := http.Get(srv.URL + "/drive/v3/files/x/export?mimeType=text/csv")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(b), "Sign in") {
		t.Errorf("sign_in_page: %d %s %q", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	res, err = http.Get(srv.URL + "/v4/spreadsheets/abc")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`"reason": "accessNotConfigured"`, `"reason": "SERVICE_DISABLED"`, `"service": "sheets.googleapis.com"`, `"consumer": "projects/123456789012"`} {
		if res.StatusCode != 403 || !strings.Contains(string(b), want) {
			t.Errorf("service_disabled: %d, body lacks %s: %s", res.StatusCode, want, b)
		}
	}
	for _, bad := range []Fault{
		{PathPrefix: "/x", SignInPage: true, Status: 500},
		{PathPrefix: "/x", SignInPage: true, ServiceDisabled: true},
		{PathPrefix: "/nowhere", ServiceDisabled: true},
	} {
		if err := f.Add(bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestProjectNumber(t *testing.T) {
	if got := ProjectNumber("123456789012-abc.apps.googleusercontent.com"); got != "123456789012" {
		t.Errorf("a Google client id: %s", got)
	}
	a, b := ProjectNumber("emulator-test"), ProjectNumber("other")
	if len(a) != 12 || a == b || a != ProjectNumber("emulator-test") {
		t.Errorf("free-form ids: %s %s; want stable, distinct 12-digit numbers", a, b)
	}
}

// TestFaultAnswersAfterReadingTheBody: a client that sends its whole
// body before it reads the answer, as Python's http.client does, gets
// the injected error whole, for every fault that answers in place of the
// handler, and the connection stays usable.
func TestFaultAnswersAfterReadingTheBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault Fault
		want  int
	}{
		{"status", Fault{PathPrefix: "/drive/", Status: 503}, 503},
		{"service_disabled", Fault{PathPrefix: "/drive/v3/", ServiceDisabled: true}, 403},
		{"sign_in_page", Fault{PathPrefix: "/drive/", SignInPage: true}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f Faults
			srv := faultServer(t, &f, "ok")
			if err := f.Add(tc.fault); err != nil {
				t.Fatal(err)
			}
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			body := bytes.Repeat([]byte("x"), 16<<20) // past any socket buffer
			head := fmt.Sprintf("PUT /drive/v3/files HTTP/1.1\r\nHost: emu\r\nContent-Length: %d\r\n\r\n", len(body))
			if _, err := conn.Write(append([]byte(head), body...)); err != nil {
				t.Fatalf("writing the body before reading the answer: %v", err)
			}
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || len(b) == 0 {
				t.Fatalf("status %d with %d bytes, want %d and a body", resp.StatusCode, len(b), tc.want)
			}
			// The same connection serves the next request.
			if _, err := io.WriteString(conn, "GET /other HTTP/1.1\r\nHost: emu\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, err = http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("next request on the connection: %v %v", resp, err)
			}
			resp.Body.Close()
		})
	}
}
