// Package metrics owns drivemail's Prometheus registry and its instruments:
// HTTP requests, MCP tool calls, sends in flight, Google API calls (latency,
// errors and bytes streamed, by API) and uploads. GET /metrics serves them.
//
// A nil *Metrics is valid and records nothing, so packages and tests that
// do not care about metrics need not build one.
//
// Labels are bounded: routes are the server's route patterns, tools are the
// registered tool names, APIs are a fixed list (see apiOf). No label ever
// carries a user, an address, a file id or a token.
package metrics

import (
	"net/http"
	"runtime"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// durationBuckets suit both a metadata call (tens of ms) and a 25 MiB send
// (tens of seconds).
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// Metrics holds the registry and every instrument.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	httpInFlight prometheus.Gauge

	toolCalls     *prometheus.CounterVec
	toolDuration  *prometheus.HistogramVec
	sendsRunning  prometheus.Gauge
	confirmations *prometheus.CounterVec

	googleRequests *prometheus.CounterVec
	googleErrors   *prometheus.CounterVec
	googleDuration *prometheus.HistogramVec
	bytesStreamed  *prometheus.CounterVec

	uploads     *prometheus.CounterVec
	uploadBytes prometheus.Counter
}

// New returns Metrics with a fresh registry holding drivemail's instruments
// plus the Go runtime and process collectors. version labels
// drivemail_build_info.
func New(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drivemail_http_requests_total",
			Help: "HTTP requests served, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "drivemail_http_request_duration_seconds",
			Help:    "Time to serve an HTTP request, by route pattern (MCP listening streams last as long as the client keeps them).",
			Buckets: durationBuckets,
		}, []string{"route"}),
		httpInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drivemail_http_requests_in_flight",
			Help: "HTTP requests being served now.",
		}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drivemail_tool_calls_total",
			Help: "MCP tool calls, by tool and outcome (ok, or error: a refusal or an internal error shown to the model).",
		}, []string{"tool", "outcome"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "drivemail_tool_call_duration_seconds",
			Help:    "Time to answer an MCP tool call, by tool.",
			Buckets: durationBuckets,
		}, []string{"tool"}),
		sendsRunning: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "drivemail_sends_in_flight",
			Help: "send_email and create_draft calls running now, including those waiting for their turn to stream (--send-memory, --max-concurrent-sends).",
		}),
		confirmations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drivemail_send_confirmations_total",
			Help: "send_email's questions to its user (--confirm-sends), by how they ended: accepted, declined, cancelled, unanswered; unaskable when the client could not be asked (sent unasked under auto, refused under always).",
		}, []string{"answer"}),
		googleRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drivemail_google_requests_total",
			Help: "Requests to Google, by API and status code (transport_error when no answer came).",
		}, []string{"api", "code"}),
		googleErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drivemail_google_errors_total",
			Help: "Requests to Google that failed, by API: a 4xx or 5xx answer, or no answer.",
		}, []string{"api"}),
		googleDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "drivemail_google_request_duration_seconds",
			Help:    "Time until Google's response headers arrive, by API (a media body streams after that).",
			Buckets: durationBuckets,
		}, []string{"api"}),
		bytesStreamed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drivemail_bytes_streamed_total",
			Help: "Bytes streamed to and from Google, by API and direction (sent, received), counted as they pass.",
		}, []string{"api", "direction"}),
		uploads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "drivemail_uploads_total",
			Help: "Uploads to /upload (direct) and /upload/<ticket> (ticket), by outcome: stored, refused (4xx) or failed (5xx).",
		}, []string{"mode", "outcome"}),
		uploadBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "drivemail_upload_bytes_total",
			Help: "Bytes read from upload request bodies.",
		}),
	}
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "drivemail_build_info",
		Help: "Always 1; labelled with the drivemail version and the Go version it was built with.",
	}, []string{"version", "goversion"})
	buildInfo.WithLabelValues(version, runtime.Version()).Set(1)

	m.reg.MustRegister(
		m.httpRequests, m.httpDuration, m.httpInFlight,
		m.toolCalls, m.toolDuration, m.sendsRunning, m.confirmations,
		m.googleRequests, m.googleErrors, m.googleDuration, m.bytesStreamed,
		m.uploads, m.uploadBytes,
		buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry is the registry the instruments live in (for tests and for
// adding collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the Prometheus text exposition of every instrument.
// A nil *Metrics serves 404 with a sentence saying metrics are off.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "Metrics are not enabled on this server.", http.StatusNotFound)
		})
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// A scrape is small; refuse to pile them up if one hangs.
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	})
}

// ToolCall starts timing one MCP tool call. Call the returned func once,
// with whether the call failed (an isError result or an error).
func (m *Metrics) ToolCall(tool string) (done func(failed bool)) {
	if m == nil {
		return func(bool) {}
	}
	start := time.Now()
	return func(failed bool) {
		outcome := "ok"
		if failed {
			outcome = "error"
		}
		m.toolCalls.WithLabelValues(tool, outcome).Inc()
		m.toolDuration.WithLabelValues(tool).Observe(time.Since(start).Seconds())
	}
}

// SendStarted counts one message being prepared and streamed until the
// returned func is called.
func (m *Metrics) SendStarted() (done func()) {
	if m == nil {
		return func() {}
	}
	m.sendsRunning.Inc()
	return m.sendsRunning.Dec
}

// SendConfirmation counts one send_email question by how it ended
// (accepted, declined, cancelled, unanswered, unaskable: a fixed set the
// tools name).
func (m *Metrics) SendConfirmation(answer string) {
	if m == nil {
		return
	}
	m.confirmations.WithLabelValues(answer).Inc()
}
