package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestInstrumentHTTPLabelsByRoutePattern(t *testing.T) {
	m := New("test")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	mux.HandleFunc("PUT /upload/{ticket}", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
	srv := httptest.NewServer(m.InstrumentHTTP(mux))
	defer srv.Close()

	for _, c := range []struct{ method, path string }{
		{"POST", "/mcp"},
		{"POST", "/mcp"},
		{"PUT", "/upload/secret-ticket-value"},
		{"GET", "/no/such/page?token=abc"},
		{"BREW", "/mcp"},
	} {
		req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	text := scrape(t, m)
	for series, want := range map[string]float64{
		`drivemail_http_requests_total{code="202",method="POST",route="POST /mcp"}`:           2,
		`drivemail_http_requests_total{code="200",method="PUT",route="PUT /upload/{ticket}"}`: 1,
		`drivemail_http_requests_total{code="404",method="GET",route="/"}`:                    1,
		`drivemail_http_requests_total{code="404",method="other",route="/"}`:                  1,
		`drivemail_http_request_duration_seconds_count{route="POST /mcp"}`:                    2,
		`drivemail_http_requests_in_flight`:                                                   0,
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %v, want %v\n%s", series, got, want, grep(text, "drivemail_http_requests_total"))
		}
	}
	for _, leak := range []string{"secret-ticket-value", "token=abc", "/no/such/page", "BREW"} {
		if strings.Contains(text, leak) {
			t.Errorf("/metrics shows %q from a request: labels must be route patterns", leak)
		}
	}
}

func TestInstrumentHTTPKeepsStreamingWorking(t *testing.T) {
	m := New("test")
	h := m.InstrumentHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Flusher); !ok {
			t.Error("the wrapped ResponseWriter lost http.Flusher (server-sent events need it)")
		}
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("ResponseController.Flush through the wrapper: %v", err)
		}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/mcp", nil))
}

func TestInstrumentUploadOutcomesAndBytes(t *testing.T) {
	m := New("test")
	handler := func(code int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(code)
		})
	}
	for _, c := range []struct {
		mode string
		code int
		body string
	}{
		{"direct", http.StatusCreated, strings.Repeat("a", 1000)},
		{"direct", http.StatusRequestEntityTooLarge, strings.Repeat("b", 24)},
		{"ticket", http.StatusCreated, strings.Repeat("c", 1)},
		{"ticket", http.StatusBadGateway, ""},
	} {
		rec := httptest.NewRecorder()
		m.InstrumentUpload(c.mode, handler(c.code)).ServeHTTP(rec, httptest.NewRequest("POST", "/upload", strings.NewReader(c.body)))
		if rec.Code != c.code {
			t.Fatalf("status %d, want %d", rec.Code, c.code)
		}
	}
	text := scrape(t, m)
	for series, want := range map[string]float64{
		`drivemail_uploads_total{mode="direct",outcome="stored"}`:  1,
		`drivemail_uploads_total{mode="direct",outcome="refused"}`: 1,
		`drivemail_uploads_total{mode="ticket",outcome="stored"}`:  1,
		`drivemail_uploads_total{mode="ticket",outcome="failed"}`:  1,
		`drivemail_upload_bytes_total`:                             1025,
	} {
		if got := value(t, text, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}

func TestInstrumentHTTPCountsAPanicAs500(t *testing.T) {
	m := New("test")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /boom", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	h := m.InstrumentHTTP(mux)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed; the server's own recovery must see it")
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/boom", nil))
	}()
	text := scrape(t, m)
	if got := value(t, text, `drivemail_http_requests_total{code="500",method="GET",route="GET /boom"}`); got != 1 {
		t.Errorf("a panicking request counted %v times as 500, want 1", got)
	}
	if got := value(t, text, "drivemail_http_requests_in_flight"); got != 0 {
		t.Errorf("in flight after a panic = %v, want 0", got)
	}
}

func TestStatusWriterRecordsCodeAndBytes(t *testing.T) {
	cases := []struct {
		name      string
		handler   func(w http.ResponseWriter)
		code      int
		bytes     int64
		sentCode  int
		sentBytes int
	}{
		{"nothing written", func(w http.ResponseWriter) {}, 200, 0, 200, 0},
		{"body only", func(w http.ResponseWriter) { _, _ = io.WriteString(w, "hello") }, 200, 5, 200, 5},
		{"status then body", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, "short")
			_, _ = io.WriteString(w, " and stout")
		}, http.StatusTeapot, 15, http.StatusTeapot, 15},
		{"the first status wins", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusInternalServerError)
		}, http.StatusAccepted, 0, http.StatusAccepted, 0},
	}
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		sw := &StatusWriter{ResponseWriter: rec}
		tc.handler(sw)
		if sw.Code() != tc.code || sw.Bytes() != tc.bytes {
			t.Errorf("%s: recorded %d, %d bytes; want %d, %d", tc.name, sw.Code(), sw.Bytes(), tc.code, tc.bytes)
		}
		if rec.Code != tc.sentCode || rec.Body.Len() != tc.sentBytes {
			t.Errorf("%s: sent %d, %d bytes; want %d, %d", tc.name, rec.Code, rec.Body.Len(), tc.sentCode, tc.sentBytes)
		}
	}
	sw := &StatusWriter{ResponseWriter: httptest.NewRecorder()}
	if err := http.NewResponseController(sw).Flush(); err != nil {
		t.Errorf("Flush through the writer: %v", err)
	}
}
