package store

import (
	"context"
	"log/slog"
	"time"
)

// SweepEvery runs s.Sweep every interval until ctx ends. Replicas may all
// run it: a sweep only deletes rows that are already dead.
func SweepEvery(ctx context.Context, s Store, every time.Duration, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.Sweep(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("store sweep failed", "err", err)
		case n > 0:
			logger.Debug("store sweep", "deleted", n)
		}
	}
}
