// Command drivemail is a remote MCP server that sends Gmail messages with
// Google Drive files attached by id. docs/reference.md lists its commands,
// flags, routes and tools.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return // the usage was printed; asking for help is not a failure
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "drivemail:", err)
		os.Exit(exitCode(err))
	}
}
