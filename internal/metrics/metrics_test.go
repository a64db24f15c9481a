package metrics

import (
	"bufio"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// scrape fetches /metrics as Prometheus would and returns the text.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// value returns the sample whose name and labels are exactly series (labels
// in the exposition's sorted order), or -1 when there is none.
func value(t *testing.T, text, series string) float64 {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("sample %q: %v", line, err)
			}
			return v
		}
	}
	return -1
}

func TestExpositionNamesEveryInstrument(t *testing.T) {
	m := New("v1.2.3")
	m.ToolCall("drive_search")(false)
	m.SendStarted()
	text := scrape(t, m)
	for _, name := range []string{
		"drivemail_build_info", "drivemail_http_requests_in_flight", "drivemail_sends_in_flight",
		"drivemail_tool_calls_total", "drivemail_tool_call_duration_seconds",
		"go_goroutines", "process_cpu_seconds_total",
	} {
		if !strings.Contains(text, "\n"+name) && !strings.HasPrefix(text, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if !strings.Contains(text, `drivemail_build_info{goversion="go`) || !strings.Contains(text, `version="v1.2.3"} 1`) {
		t.Errorf("build info not labelled with the version:\n%s", grep(text, "drivemail_build_info"))
	}
}

func TestToolCallsAndSendsInFlight(t *testing.T) {
	m := New("test")
	m.ToolCall("send_email")(false)
	m.ToolCall("send_email")(true)
	m.ToolCall("send_email")(false)
	m.ToolCall("drive_search")(true)
	doneA := m.SendStarted()
	doneB := m.SendStarted()
	m.SendConfirmation("accepted")
	m.SendConfirmation("declined")
	m.SendConfirmation("declined")
	text := scrape(t, m)
	for series, want := range map[string]float64{
		`drivemail_tool_calls_total{outcome="ok",tool="send_email"}`:      2,
		`drivemail_tool_calls_total{outcome="error",tool="send_email"}`:   1,
		`drivemail_tool_calls_total{outcome="error",tool="drive_search"}`: 1,
		`drivemail_tool_calls_total{outcome="ok",tool="drive_search"}`:    -1,
		`drivemail_tool_call_duration_seconds_count{tool="send_email"}`:   3,
		`drivemail_sends_in_flight`:                                       2,
		`drivemail_send_confirmations_total{answer="accepted"}`:           1,
		`drivemail_send_confirmations_total{answer="declined"}`:           2,
		`drivemail_send_confirmations_total{answer="unanswered"}`:         -1,
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	doneA()
	doneB()
	if got := value(t, scrape(t, m), "drivemail_sends_in_flight"); got != 0 {
		t.Errorf("sends in flight after both ended = %v, want 0", got)
	}
}

func TestNilMetricsRecordNothingAndPassThrough(t *testing.T) {
	var m *Metrics
	m.ToolCall("x")(true)
	m.SendStarted()()
	m.SendConfirmation("accepted")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	for _, wrapped := range []http.Handler{m.InstrumentHTTP(h), m.InstrumentUpload("direct", h)} {
		rec := httptest.NewRecorder()
		wrapped.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code != http.StatusTeapot {
			t.Errorf("nil metrics changed the status to %d", rec.Code)
		}
	}
	if m.GoogleTransport(nil) != http.DefaultTransport {
		t.Error("nil metrics should hand back the base transport")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "not enabled") {
		t.Errorf("nil metrics /metrics = %d %q, want 404 with a sentence", rec.Code, rec.Body)
	}
}

func grep(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// errRoundTripper fails every request, as a dead network does.
type errRoundTripper struct{}

func (errRoundTripper) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp: connection refused")
}
