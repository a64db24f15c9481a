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

// Connection timeouts of every listener. A body has its own deadline
// (bodyDeadline); these bound the rest of a connection's life.
const (
	// readHeaderTimeout: a client has this long to send a request's
	// headers, from its first byte (and a new connection from accepting).
	readHeaderTimeout = 10 * time.Second
	// idleTimeout: a kept-alive connection may wait this long for its next
	// request. Above the reverse proxies' own (Caddy's is 2 minutes), so
	// the proxy, not drivemail, closes an idle upstream connection.
	idleTimeout = 150 * time.Second
	// maxHeaderBytes caps a request's headers: tokens and session ids are
	// short, and a stranger's headers are all drivemail reads of them.
	maxHeaderBytes = 64 << 10
)

// timeouts are a listener's connection timeouts; tests shorten them.
type timeouts struct {
	readHeader, idle time.Duration
}

var defaultTimeouts = timeouts{readHeader: readHeaderTimeout, idle: idleTimeout}

// newHTTPServer is the http.Server drivemail serves h with.
func newHTTPServer(h http.Handler, t timeouts, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.readHeader,
		IdleTimeout:       t.idle,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// serve runs srv on ln until ctx ends, then shuts down gracefully: the
// listener closes at once, and requests in flight (a send streaming
// 25 MiB to Gmail) get up to grace to finish. Past grace the remaining
// connections are closed, which cancels their requests: compose then
// aborts its Gmail upload, so nothing half-sent goes out. There are no
// listening streams to end: /mcp answers GET with 405.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration, logger *slog.Logger) error {
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
	if err := srv.Shutdown(graceCtx); err != nil {
		logger.Warn("grace period over: closing the remaining connections", "error", err.Error())
		_ = srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", serr)
	}
	logger.Info("stopped")
	return nil
}
