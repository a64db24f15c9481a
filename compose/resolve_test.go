package compose_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/internal/identity"
)

// metadataGate holds each Drive metadata call until want of them are in
// flight together (or a deadline passes, which the test reports), and
// records the most seen at once.
type metadataGate struct {
	base  http.RoundTripper
	want  int
	mu    sync.Mutex
	now   int
	most  int
	ready chan struct{}
}

func (g *metadataGate) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/drive/v3/files/") || r.URL.Query().Get("alt") == "media" {
		return g.base.RoundTrip(r)
	}
	g.mu.Lock()
	g.now++
	g.most = max(g.most, g.now)
	if g.now == g.want {
		close(g.ready)
	}
	g.mu.Unlock()
	select {
	case <-g.ready:
	case <-time.After(5 * time.Second):
	}
	res, err := g.base.RoundTrip(r)
	g.mu.Lock()
	g.now--
	g.mu.Unlock()
	return res, err
}

// TestTenFilesMetadataAtOnce: the metadata of a message's ten files is
// asked for all at once, so ten small files wait one metadata round trip
// (~0.23 s at Google), not two.
func TestTenFilesMetadataAtOnce(t *testing.T) {
	e := newEnv(t, compose.Config{})
	var files []drivesvc.File
	for i := range compose.MaxFiles {
		f, _ := e.putBytes(fmt.Sprintf("f%d.pdf", i), 1000)
		files = append(files, f)
	}
	g := &metadataGate{base: e.hc.Transport, want: compose.MaxFiles, ready: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := e.svc.Send(ctx, e.as(identity.User{}, &http.Client{Transport: g}), attach("ten", files...), compose.Options{}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if g.most != compose.MaxFiles {
		t.Errorf("at most %d metadata calls in flight at once; want all %d", g.most, compose.MaxFiles)
	}
}
