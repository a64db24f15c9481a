// Command uploadbench measures the /upload endpoint: a large
// file streamed through `drivemail serve` into Drive, against the same
// bytes uploaded straight to the emulator with the Drive client library in
// the same run.
//
// Both drivemail processes are separate from this one: `drivemail
// emulator` is Google, and `drivemail serve --google-endpoint` is the
// server whose memory is measured (peak RSS growth from /proc/PID/status
// over the uploads). The bench signs in through the server's real OAuth
// flow (the emulator auto-approves) to get a bearer token.
//
// Printed: the server's peak RSS growth (target under 32 MiB) and its
// throughput as a ratio to the direct upload (target at least 0.8).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	var (
		drivemail = flag.String("drivemail", "bin/drivemail", "the drivemail binary to run as emulator and server")
		size      = flag.Int64("size", 1<<30, "bytes per upload")
		reps      = flag.Int("reps", 5, "uploads of each kind; the best time of each is compared (the machine may be busy)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *drivemail, *size, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "uploadbench:", err)
		os.Exit(1)
	}
}
