package drive_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
)

const idle = 150 * time.Millisecond

// stallingBodies serves Drive's answers with bodies that stop after the
// first `after` bytes and send nothing more until the request ends, as a
// connection that hangs mid-transfer.
type stallingBodies struct {
	base  http.RoundTripper
	after int
}

func (s stallingBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := s.base.RoundTrip(r)
	if err != nil {
		return res, err
	}
	res.Body = &stallingBody{rc: res.Body, left: s.after, ctx: r.Context()}
	return res, nil
}

type stallingBody struct {
	rc   io.ReadCloser
	left int
	ctx  context.Context
}

func (b *stallingBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		<-b.ctx.Done()
		return 0, b.ctx.Err()
	}
	n, err := b.rc.Read(p[:min(len(p), b.left)])
	b.left -= n
	return n, err
}

func (b *stallingBody) Close() error { return b.rc.Close() }

// stalledEnv is an emulator whose Drive bodies stall after `after` bytes,
// and a client of it with a short idle timeout, for a test inside a
// synctest bubble.
func stalledEnv(t *testing.T, after int) (*env, *drive.Client) {
	t.Helper()
	e := newBubbleEnv(t)
	hc := *e.Client(user, emutest.ScopeDriveReadonly)
	hc.Transport = stallingBodies{base: hc.Transport, after: after}
	dc, err := drive.New(context.Background(), &hc, e.Endpoints, drive.WithIdleTimeout(idle))
	if err != nil {
		t.Fatal(err)
	}
	return e, dc
}

// wantStalled fails t unless err is a transient ErrStalled.
func wantStalled(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, drive.ErrStalled) || !drive.IsTransient(err) {
		t.Errorf("%s: err = %v, want a transient ErrStalled", what, err)
	}
}

// TestStalledBodiesFail: a download, an export and a Range read whose
// body stops mid-way fail with ErrStalled after the idle timeout instead
// of waiting for the caller's context.
func TestStalledBodiesFail(t *testing.T) { synctest.Test(t, testStalledBodiesFail) }

func testStalledBodiesFail(t *testing.T) {
	e, dc := stalledEnv(t, 10_000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bin := e.Put(user, drivesvc.FileSpec{Name: "big.bin", Content: random(100_000)})
	doc := e.Put(user, drivesvc.FileSpec{Name: "Doc", Kind: drivesvc.KindDoc, DocFillBytes: 100_000})
	gotBin, err := e.dc.Get(ctx, drive.Ref{ID: bin.ID})
	if err != nil {
		t.Fatal(err)
	}
	gotDoc, err := e.dc.Get(ctx, drive.Ref{ID: doc.ID})
	if err != nil {
		t.Fatal(err)
	}
	read := func(rc io.ReadCloser, err error) error {
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		defer rc.Close()
		n, err := io.Copy(io.Discard, rc)
		if n != 10_000 {
			t.Errorf("read %d bytes before the stall, want 10000", n)
		}
		return err
	}
	wantStalled(t, "download", read(dc.Download(ctx, gotBin)))
	wantStalled(t, "export", read(dc.Export(ctx, gotDoc, "text/plain", nil)))
	_, err = dc.RangeReader(ctx, gotBin, 1, 50_000).ReadAt(make([]byte, 20_000), 0)
	wantStalled(t, "range read", err)
	if ctx.Err() != nil {
		t.Errorf("the reads waited for the caller's context")
	}
}

// TestStalledAnswerFails: Drive not answering at all (headers never come)
// is a stall too.
func TestStalledAnswerFails(t *testing.T) { synctest.Test(t, testStalledAnswerFails) }

func testStalledAnswerFails(t *testing.T) {
	e := newBubbleEnv(t)
	dc, err := drive.New(context.Background(), e.Client(user, emutest.ScopeDriveReadonly), e.Endpoints, drive.WithIdleTimeout(idle))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f := e.Put(user, drivesvc.FileSpec{Name: "a.bin", Content: random(1000)})
	got, err := dc.Get(ctx, drive.Ref{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	e.Inject(emulator.Fault{Method: "GET", PathPrefix: "/drive/v3/files/" + f.ID, Delay: 30_000_000_000, Times: 2})
	start := time.Now()
	_, err = dc.Download(ctx, got)
	wantStalled(t, "download", err)
	_, err = dc.RangeReader(ctx, got, 1, 1000).ReadAt(make([]byte, 10), 0)
	wantStalled(t, "range read", err)
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("the stalls took %v to fail", took)
	}
}

// TestSlowReaderIsNotAStall: a caller that takes longer than the idle
// timeout between reads (a Gmail chunk going out) gets the whole file:
// only time spent waiting on Drive counts.
func TestSlowReaderIsNotAStall(t *testing.T) { synctest.Test(t, testSlowReaderIsNotAStall) }

func testSlowReaderIsNotAStall(t *testing.T) {
	e := newBubbleEnv(t)
	dc, err := drive.New(context.Background(), e.Client(user, emutest.ScopeDriveReadonly), e.Endpoints, drive.WithIdleTimeout(idle))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	content := random(64 << 10)
	f := e.Put(user, drivesvc.FileSpec{Name: "a.bin", Content: content})
	got, err := dc.Get(ctx, drive.Ref{ID: f.ID})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := dc.Download(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	// The sleeps are the slow reader under test, not waits.
	time.Sleep(2 * idle)
	buf := make([]byte, 16<<10)
	total := 0
	for {
		n, err := rc.Read(buf)
		total += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read after %d bytes: %v", total, err)
		}
		time.Sleep(2 * idle)
	}
	if total != len(content) {
		t.Errorf("read %d bytes, want %d", total, len(content))
	}
}
