package server

import (
	"context"
	"errors"
	"io"
)

// Run starts the server described by cfg and serves until ctx ends.
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	return errors.New("serve: not built yet")
}
