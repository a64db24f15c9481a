package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestLogLinesCarryTheRequestID(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(withRequestID(slog.NewTextHandler(&buf, nil)))
	ctx := context.WithValue(context.Background(), requestInfoKey{}, &requestInfo{id: "0123abcd"})

	for _, c := range []struct {
		name string
		log  func()
		want int // times request_id=0123abcd appears
	}{
		{"context log call", func() { logger.InfoContext(ctx, "message sent", "user", "u1") }, 1},
		{"already has one", func() { logger.InfoContext(ctx, "tool call", "request_id", "0123abcd") }, 1},
		{"derived logger", func() { logger.With("component", "x").WithGroup("g").InfoContext(ctx, "grouped") }, 1},
		{"no context", func() { logger.Info("startup") }, 0},
		{"context without a request", func() { logger.InfoContext(context.Background(), "sweep") }, 0},
	} {
		buf.Reset()
		c.log()
		if got := strings.Count(buf.String(), "request_id=0123abcd"); got != c.want {
			t.Errorf("%s: request id appears %d times, want %d: %s", c.name, got, c.want, buf.String())
		}
	}
}
