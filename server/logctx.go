package server

import (
	"context"
	"log/slog"
)

// requestIDHandler gives every log record made with a request's context
// (InfoContext, LogAttrs…) that request's id, so the lines a request causes
// deep in compose, upload or drive can be found from its "http request"
// line. A record that already carries request_id is left alone.
type requestIDHandler struct {
	slog.Handler
}

// withRequestID wraps h.
func withRequestID(h slog.Handler) slog.Handler { return requestIDHandler{h} }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" && !hasAttr(r, "request_id") {
		r = r.Clone()
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

func hasAttr(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}
