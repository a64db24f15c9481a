package benchkit

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
)

func TestSpreadTakesTurnsWithTheToken(t *testing.T) {
	var hits [2]atomic.Int64
	var srvs []*url.URL
	for i := range hits {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer tok" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			hits[i].Add(1)
		}))
		defer srv.Close()
		u, _ := url.Parse(srv.URL)
		srvs = append(srvs, u)
	}
	c := &http.Client{Transport: &spread{next: http.DefaultTransport, replicas: srvs, token: "tok"}}
	for range 6 {
		res, err := c.Post(srvs[0].String()+"/mcp", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d", res.StatusCode)
		}
	}
	if hits[0].Load() != 3 || hits[1].Load() != 3 {
		t.Errorf("requests per replica: %d and %d; want 3 each", hits[0].Load(), hits[1].Load())
	}
}
