package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/internal/metrics"
)

// scrapeMetrics GETs /metrics as Prometheus would, from the handler the
// metrics listener serves, and returns the text.
func scrapeMetrics(t *testing.T, ts *testServer) string {
	t.Helper()
	rec := httptest.NewRecorder()
	ts.meter.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func hasSample(text, series, value string) bool {
	return strings.Contains(text, "\n"+series+" "+value+"\n")
}

func TestMetricsThroughTheRealRoutes(t *testing.T) {
	mail := &fakeMail{started: make(chan struct{}), release: make(chan struct{})}
	ts := newTestServer(t, func(d *Deps) {
		d.Metrics = metrics.New("test")
		d.Tools.Mail = mail
	})
	if res, err := http.Get(ts.URL + "/healthz"); err == nil {
		res.Body.Close()
	}
	cs := connect(t, ts, "2025-11-25", nil)
	ctx := context.Background()

	sendDone := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{
			"to": "ana@example.com", "subject": "Q3", "body_text": "Attached."}})
		if err == nil && res.IsError {
			t.Errorf("send_email refused: %v", res.Content)
		}
		sendDone <- err
	}()
	select {
	case <-mail.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the send did not start")
	}
	if text := scrapeMetrics(t, ts); !hasSample(text, "drivemail_sends_in_flight", "1") {
		t.Errorf("while a send runs, /metrics says:\n%s", grepLines(text, "sends_in_flight"))
	}
	close(mail.release)
	if err := <-sendDone; err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "drive_get_file", Arguments: map[string]any{"file_id": "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"}}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/upload", strings.NewReader("hello"))
	req.Header.Set("Authorization", "Bearer "+testToken)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}

	text := scrapeMetrics(t, ts)
	for _, c := range []struct{ series, value string }{
		{`drivemail_sends_in_flight`, "0"},
		{`drivemail_tool_calls_total{outcome="ok",tool="send_email"}`, "1"},
		{`drivemail_tool_calls_total{outcome="error",tool="drive_get_file"}`, "1"},
		{`drivemail_http_requests_total{code="200",method="GET",route="GET /healthz"}`, "1"},
		{`drivemail_uploads_total{mode="direct",outcome="failed"}`, "1"},
	} {
		if !hasSample(text, c.series, c.value) {
			t.Errorf("/metrics lacks %s %s:\n%s", c.series, c.value, grepLines(text, "drivemail_"))
		}
	}
	if !strings.Contains(text, `drivemail_http_requests_total{code="200",method="POST",route="/mcp"}`) {
		t.Errorf("/metrics does not count POST /mcp:\n%s", grepLines(text, "http_requests_total"))
	}
	if strings.Contains(text, testToken) || strings.Contains(text, "ana@example.com") {
		t.Error("/metrics shows a token or an address")
	}
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// /metrics needs no token, so it is served on its own listener
// (--metrics-addr, loopback by default), never on the public one. Before,
// anyone could read it on the public listener.
func TestMetricsHaveTheirOwnListener(t *testing.T) {
	ts := newTestServer(t, func(d *Deps) { d.Metrics = metrics.New("test") })
	res, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the public listener: %d, want 404", res.StatusCode)
	}

	logger := slog.New(slog.DiscardHandler)
	url, stop, err := serveMetrics("127.0.0.1:0", ts.meter, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	res, err = http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "drivemail_build_info") {
		t.Errorf("GET %s: %d %.200s", url, res.StatusCode, body)
	}
	res, err = http.Get(strings.TrimSuffix(url, "/metrics") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("the metrics listener serves /healthz: %d", res.StatusCode)
	}

	taken := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/metrics")
	if _, _, err := serveMetrics(taken, ts.meter, logger); err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("an address in use: %v, want an error naming --metrics-addr", err)
	}
	if url, stop, err := serveMetrics("", ts.meter, logger); err != nil || url != "" {
		t.Errorf("metrics off: %q %v", url, err)
	} else {
		stop()
	}
}
