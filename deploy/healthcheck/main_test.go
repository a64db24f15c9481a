package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"status":"unavailable","store":"unreachable"}`))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	if err := check(context.Background(), "0.0.0.0:"+port); err != nil {
		t.Errorf("healthy server: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := check(context.Background(), ":"+port); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("503 from /healthz: err = %v, want one naming 503", err)
	}
	srv.Close()
	if err := check(context.Background(), "0.0.0.0:"+port); err == nil {
		t.Error("a server that is down passed the check")
	}
	for _, bad := range []string{"8080", "host:0", "host:"} {
		if err := check(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "DRIVEMAIL_ADDR") {
			t.Errorf("DRIVEMAIL_ADDR %q: err = %v, want a sentence about DRIVEMAIL_ADDR", bad, err)
		}
	}
}
