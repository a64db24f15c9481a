package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPickRoute: in file mode /pick/{ticket} reaches the pick page (the
// ticket never in the request log, as it is a credential until used);
// elsewhere the route says this server reads the Drive itself.
func TestPickRoute(t *testing.T) {
	const ticket = "p1.0011aabbccdd.SEALEDTICKET"
	ts := newTestServer(t, func(d *Deps) {
		d.Picks = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page for "+r.PathValue("ticket")) })
	})
	resp, err := http.Get(ts.URL + "/pick/" + ticket)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "page for "+ticket {
		t.Errorf("GET /pick/…: %d %q", resp.StatusCode, body)
	}
	if logs := ts.logs.String(); strings.Contains(logs, "SEALEDTICKET") || !strings.Contains(logs, "path=/pick/{ticket}") {
		t.Errorf("the request log names the ticket, or not the route:\n%s", logs)
	}

	readonly := newTestServer(t, nil)
	resp, err = http.Get(readonly.URL + "/pick/" + ticket)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "drive_search") {
		t.Errorf("readonly mode's /pick/…: %d %q", resp.StatusCode, body)
	}
}
