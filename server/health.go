package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"
)

// healthTimeout bounds the store check, so a hung database makes
// /healthz fail rather than hang.
const healthTimeout = 2 * time.Second

// healthHandler answers GET /healthz: 200 when the store answers, 503 when
// it does not. The cause is logged, never shown.
func healthHandler(store Pinger, version string, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, code := "ok", http.StatusOK
		storeState := "ok"
		if store != nil {
			ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
			err := store.Ping(ctx)
			cancel()
			if err != nil {
				logger.WarnContext(r.Context(), "health: store unreachable", "request_id", RequestID(r.Context()), "error", err.Error())
				status, code, storeState = "unavailable", http.StatusServiceUnavailable, "unreachable"
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"status": status, "store": storeState, "version": version})
	})
}
