package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// serve runs srv on ln until ctx ends, then shuts down gracefully: the
// listener closes at once, MCP listening streams are ended, and requests
// in flight (a send streaming 25 MiB to Gmail) get up to grace to finish.
// Past grace the remaining connections are closed, which cancels their
// requests: compose then aborts its Gmail upload, so nothing half-sent
// goes out.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, sessions interface{ CloseSessions(context.Context) }, grace time.Duration, logger *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down: letting running requests finish", "grace", grace)
	graceCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()

	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(graceCtx) }()
	// Listening streams never go idle on their own; end them now and again
	// while Shutdown waits, in case a client opened one meanwhile.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	sessions.CloseSessions(graceCtx)
	for {
		select {
		case err := <-done:
			if err != nil {
				logger.Warn("grace period over: closing the remaining connections", "error", err.Error())
				_ = srv.Close()
			}
			if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
				return fmt.Errorf("serve: %w", serr)
			}
			logger.Info("stopped")
			return nil
		case <-tick.C:
			sessions.CloseSessions(graceCtx)
		}
	}
}
