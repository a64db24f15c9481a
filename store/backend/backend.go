// Package backend opens the store a --store URL names.
package backend

import (
	"context"
	"fmt"
	"strings"

	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/postgres"
	"github.com/drivemail/drivemail/store/sqlite"
)

// Open opens "sqlite:PATH" or "postgres://…" (also "postgresql://…").
func Open(ctx context.Context, url string, opts store.Options) (store.Store, error) {
	switch {
	case strings.HasPrefix(url, "sqlite:"):
		return sqlite.Open(ctx, strings.TrimPrefix(url, "sqlite:"), opts)
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return postgres.Open(ctx, url, opts)
	default:
		return nil, fmt.Errorf("store %q: want sqlite:PATH (for example sqlite:drivemail.db) or postgres://user@host:5432/db", redact(url))
	}
}

// redact drops anything that looks like credentials from a URL for an error.
func redact(url string) string {
	if i := strings.Index(url, "@"); i >= 0 {
		if j := strings.Index(url, "://"); j >= 0 && j < i {
			return url[:j+3] + "…" + url[i:]
		}
		return "…" + url[i:]
	}
	return url
}
