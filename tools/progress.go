package tools

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Progress notifications are throttled: one at least every progressStep
// bytes or progressEvery, whichever comes first, plus the last one.
const (
	progressStep  = 1 << 20
	progressEvery = 500 * time.Millisecond
)

// progressFunc returns a callback that reports bytes streamed as MCP
// progress notifications, or nil when the caller sent no progress token.
func progressFunc(ctx context.Context, req mcp.CallToolRequest) func(done, total int64) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	p := &progress{
		token: req.Params.Meta.ProgressToken,
		send: func(params map[string]any) {
			// A full notification queue drops the update; the next one
			// carries the newer figure, so nothing is lost but a step.
			_ = srv.SendNotificationToClient(ctx, "notifications/progress", params)
		},
		now: time.Now,
	}
	return p.report
}

// progress throttles and shapes progress notifications for one call.
type progress struct {
	token any
	send  func(map[string]any)
	now   func() time.Time

	mu       sync.Mutex
	lastDone int64
	lastAt   time.Time
	started  bool
}

// report is called by the sender as bytes stream; it may be called from
// any goroutine.
func (p *progress) report(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done <= p.lastDone && p.started {
		return // progress must increase with each notification
	}
	now := p.now()
	final := total > 0 && done >= total
	if p.started && !final && done-p.lastDone < progressStep && now.Sub(p.lastAt) < progressEvery {
		return
	}
	p.started, p.lastDone, p.lastAt = true, done, now
	params := map[string]any{"progressToken": p.token, "progress": done}
	msg := fmt.Sprintf("%s sent to Gmail", humanBytes(done))
	if total > 0 {
		params["total"] = total
		msg = fmt.Sprintf("%s of %s sent to Gmail", humanBytes(done), humanBytes(total))
	}
	params["message"] = msg
	p.send(params)
}
