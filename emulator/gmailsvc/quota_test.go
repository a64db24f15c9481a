package gmailsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	gmail "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// rawError reads the JSON error body a Google client error carries.
func rawError(t *testing.T, err error) (int, googleError) {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v, want a Google API error", err)
	}
	var body googleError
	if jerr := json.Unmarshal([]byte(ge.Body), &body); jerr != nil {
		t.Fatalf("error body is not JSON: %s", ge.Body)
	}
	return ge.Code, body
}

// sendWithDeadline uploads raw with a short chunk retry deadline, so a
// refused last chunk is retried for a second, not the client's 32.
func sendWithDeadline(svc *gmail.Service, raw []byte) (*gmail.Message, error) {
	return svc.Users.Messages.Send("me", &gmail.Message{}).
		Media(bytes.NewReader(raw), googleapi.ContentType("message/rfc822"), googleapi.ChunkSize(chunk),
			googleapi.ChunkRetryDeadline(time.Second)).Do()
}

func bigMessage(subject string) []byte {
	m := basic(subject)
	m.text = strings.Repeat("0123456789abcdef\r\n", 3*chunk/18)
	return m.build()
}

// TestSendingLimit: while an account is past its daily sending limit,
// every send it makes completes with Gmail's 429 "User-rate limit
// exceeded.  Retry after <time> (Mail sending)" (the error guide: "HTTP
// 429 Too Many Requests "User-rate limit exceeded" "(Mail sending)" error
// is returned with time to retry"), whatever the upload protocol, and
// nothing is sent. Drafts and other accounts are not limited.
func TestSendingLimit(t *testing.T) { synctest.Test(t, testSendingLimit) }

func testSendingLimit(t *testing.T) {
	f := newBubbleFixture(t)
	if err := f.gmail.AddQuotaFault(QuotaFault{Kind: SendingLimit, User: "Ann@Example.com", For: core.Duration(3 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(3 * time.Hour)
	svc := f.sender(ann)
	for name, sendOne := range map[string]func() error{
		"multipart": func() error { _, err := send(svc, bytes.NewReader(basic("small").build()), ""); return err },
		"resumable": func() error { _, err := sendWithDeadline(svc, bigMessage("large")); return err },
		"JSON raw": func() error {
			_, err := svc.Users.Messages.Send("me", &gmail.Message{Raw: "RnJvbTogYW5uQGV4YW1wbGUuY29tDQpUbzogYm9iQGV4YW1wbGUuY29tDQoNCmhp"}).Do()
			return err
		},
	} {
		code, body := rawError(t, sendOne())
		e := body.Error
		if code != 429 || e.Code != 429 || e.Status != "RESOURCE_EXHAUSTED" || len(e.Errors) != 1 ||
			e.Errors[0].Reason != "rateLimitExceeded" || e.Errors[0].Domain != "usageLimits" || e.Errors[0].Message != e.Message {
			t.Errorf("%s: %d %+v, want Gmail's 429 sending-limit body", name, code, e)
		}
		const prefix, suffix = "User-rate limit exceeded.  Retry after ", " (Mail sending)"
		stamp, ok := strings.CutSuffix(strings.TrimPrefix(e.Message, prefix), suffix)
		at, perr := time.Parse("2006-01-02T15:04:05.000Z", stamp)
		if !strings.HasPrefix(e.Message, prefix) || !ok || perr != nil || at.Sub(until).Abs() > time.Minute {
			t.Errorf("%s: message %q, want %q<about %s>%q", name, e.Message, prefix, until.UTC().Format(time.RFC3339), suffix)
		}
	}
	if n := len(f.gmail.Messages(ann)); n != 0 {
		t.Errorf("%d messages stored past the sending limit", n)
	}
	if _, err := svc.Users.Drafts.Create("me", &gmail.Draft{Message: &gmail.Message{}}).
		Media(bytes.NewReader(basic("draft").build()), googleapi.ContentType("message/rfc822")).Do(); err != nil {
		t.Errorf("a draft past the sending limit: %v", err)
	}
	if _, err := send(f.sender(bob), bytes.NewReader(msg{from: bob, to: ann, subject: "x", text: "x"}.build()), ""); err != nil {
		t.Errorf("another account: %v", err)
	}
	f.gmail.ClearQuotaFaults()
	if _, err := send(svc, bytes.NewReader(basic("again").build()), ""); err != nil {
		t.Errorf("after the limit: %v", err)
	}
}

// TestRateLimitBodies: each rate or daily limit answers with Google's
// body. The quota system names the limit in its message and in an
// ErrorInfo (reason RATE_LIMIT_EXCEEDED, the quota_unit telling a
// per-user limit from a per-project one) with a Help link; the error
// guide's legacy bodies carry only a reason.
func TestRateLimitBodies(t *testing.T) {
	for _, tc := range []struct {
		fault                 QuotaFault
		code                  int
		reason, message, unit string
	}{
		{QuotaFault{Kind: UserRateLimit}, 429, "rateLimitExceeded",
			"Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service 'gmail.googleapis.com' for consumer 'project_number:123456789012'.",
			"1/min/{project}/{user}"},
		{QuotaFault{Kind: UserRateLimit, Status: 403}, 403, "rateLimitExceeded",
			"Quota exceeded for quota metric 'Queries' and limit 'Queries per minute per user' of service 'gmail.googleapis.com' for consumer 'project_number:123456789012'.",
			"1/min/{project}/{user}"},
		{QuotaFault{Kind: ProjectRateLimit}, 429, "rateLimitExceeded",
			"Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'gmail.googleapis.com' for consumer 'project_number:123456789012'.",
			"1/min/{project}"},
		{QuotaFault{Kind: UserRateLimit, Status: 403, Legacy: true}, 403, "userRateLimitExceeded", "User Rate Limit Exceeded", ""},
		{QuotaFault{Kind: ProjectRateLimit, Status: 403, Legacy: true}, 403, "rateLimitExceeded", "Rate Limit Exceeded", ""},
		{QuotaFault{Kind: DailyLimit}, 403, "dailyLimitExceeded", "Daily Limit Exceeded", ""},
	} {
		f := newFixture(t)
		if err := f.gmail.AddQuotaFault(tc.fault); err != nil {
			t.Fatal(err)
		}
		svc := f.sender(ann)
		_, err := svc.Users.GetProfile("me").Do()
		code, body := rawError(t, err)
		e := body.Error
		if code != tc.code || e.Code != tc.code || e.Message != tc.message || len(e.Errors) != 1 ||
			e.Errors[0].Reason != tc.reason || e.Errors[0].Domain != "usageLimits" || e.Errors[0].Message != tc.message {
			t.Errorf("%+v: %d %+v, want %d %s %q", tc.fault, code, e, tc.code, tc.reason, tc.message)
		}
		if want := map[int]string{403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED"}[tc.code]; e.Status != want {
			t.Errorf("%+v: status %q, want %q", tc.fault, e.Status, want)
		}
		checkQuotaDetails(t, e.Details, tc.unit)
		// The fault answered once; the next request goes through.
		if _, err := svc.Users.GetProfile("me").Do(); err != nil {
			t.Errorf("%+v: the request after the fault: %v", tc.fault, err)
		}
	}
}

func checkQuotaDetails(t *testing.T, details []any, unit string) {
	t.Helper()
	if unit == "" {
		if len(details) != 0 {
			t.Errorf("a legacy body carries details %v", details)
		}
		return
	}
	b, _ := json.Marshal(details)
	var d []struct {
		Type     string            `json:"@type"`
		Reason   string            `json:"reason"`
		Domain   string            `json:"domain"`
		Metadata map[string]string `json:"metadata"`
		Links    []struct{ Description, URL string }
	}
	if err := json.Unmarshal(b, &d); err != nil || len(d) != 2 {
		t.Fatalf("details %s: want an ErrorInfo and a Help", b)
	}
	info, help := d[0], d[1]
	if info.Type != "type.googleapis.com/google.rpc.ErrorInfo" || info.Reason != "RATE_LIMIT_EXCEEDED" || info.Domain != "googleapis.com" ||
		info.Metadata["service"] != "gmail.googleapis.com" || info.Metadata["quota_unit"] != unit || info.Metadata["consumer"] != "projects/"+ProjectNumber {
		t.Errorf("ErrorInfo %+v, want RATE_LIMIT_EXCEEDED for gmail.googleapis.com with quota_unit %s", info, unit)
	}
	if help.Type != "type.googleapis.com/google.rpc.Help" || len(help.Links) != 1 || !strings.HasPrefix(help.Links[0].URL, "https://cloud.google.com/") {
		t.Errorf("Help %+v", help)
	}
}

// TestRateLimitAtTheEnd: a rate limit on the request that completes a
// resumable upload is a 429 the Go client retries: the session keeps the
// message, and it goes once.
func TestRateLimitAtTheEnd(t *testing.T) { synctest.Test(t, testRateLimitAtTheEnd) }

func testRateLimitAtTheEnd(t *testing.T) {
	f := newBubbleFixture(t)
	if err := f.gmail.AddQuotaFault(QuotaFault{Kind: UserRateLimit, At: AtEnd, Times: 2, User: ann}); err != nil {
		t.Fatal(err)
	}
	sent, err := send(f.sender(ann), bytes.NewReader(bigMessage("retried")), "")
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if msgs := f.gmail.Messages(ann); len(msgs) != 1 || msgs[0].ID != sent.Id {
		t.Errorf("%d messages stored, want the one sent", len(msgs))
	}
}

// TestRateLimitAtTheEndEndsTheSession: a 403 rate limit on the last
// chunk ends the resumable session, as Google's guide says of any 4xx,
// and so does a 429 armed with end_session: the Go client's retry of
// its last chunk then finds no session (404), and nothing was sent.
func TestRateLimitAtTheEndEndsTheSession(t *testing.T) {
	for _, fault := range []QuotaFault{
		{Kind: UserRateLimit, At: AtEnd, Status: 403, User: ann},
		{Kind: UserRateLimit, At: AtEnd, EndSession: true, User: ann},
	} {
		f := newFixture(t)
		if err := f.gmail.AddQuotaFault(fault); err != nil {
			t.Fatal(err)
		}
		_, err := send(f.sender(ann), bytes.NewReader(bigMessage("ended")), "")
		var ge *googleapi.Error
		want := 404
		if fault.Status == 403 {
			want = 403 // not retried: the answer is the refusal itself
		}
		if !errors.As(err, &ge) || ge.Code != want {
			t.Errorf("%+v: err = %v, want HTTP %d", fault, err, want)
		}
		if msgs := f.gmail.Messages(ann); len(msgs) != 0 {
			t.Errorf("%+v: %d messages stored from an ended session", fault, len(msgs))
		}
	}
}

func TestQuotaControlRoute(t *testing.T) {
	f := newFixture(t)
	post := func(body string) (int, string) {
		resp, err := http.Post(f.srv.URL+"/_emulator/gmail/quota", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, bad := range []string{
		`{"kind":"sending_limit"}`,
		`{"kind":"sending_limit","user":"ann@example.com","times":2,"status":403}`,
		`{"kind":"lunch"}`,
		`{"kind":"user_rate_limit","status":500}`,
		`{"kind":"daily_limit","status":429}`,
		`{"kind":"user_rate_limit","at":"middle"}`,
		`{"kind":"user_rate_limit","for":"1h"}`,
		`{"kind":"user_rate_limit","colour":"red"}`,
		`{"kind":"user_rate_limit","end_session":true}`,
		`{"kind":"user_rate_limit","at":"end","status":403,"end_session":true}`,
	} {
		if code, body := post(bad); code != 400 || !strings.Contains(body, "quota fault") {
			t.Errorf("%s: %d %s, want 400", bad, code, body)
		}
	}
	if code, body := post(`{"kind":"sending_limit","user":"ann@example.com","for":"2h"}`); code != 204 {
		t.Fatalf("arm: %d %s", code, body)
	}
	if _, err := send(f.sender(ann), bytes.NewReader(basic("x").build()), ""); err == nil {
		t.Error("send past the limit armed by the route went through")
	}
	req, _ := http.NewRequestWithContext(context.Background(), "DELETE", f.srv.URL+"/_emulator/gmail/quota", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("clear: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := send(f.sender(ann), bytes.NewReader(basic("x").build()), ""); err != nil {
		t.Errorf("send after clearing: %v", err)
	}
}
