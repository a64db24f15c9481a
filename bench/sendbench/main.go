// Command sendbench measures compose's streaming send against the plain
// Google client libraries moving the same bytes, through an emulator
// running as a separate process (bin/drivemail emulator).
//
// The parent starts the emulator, uploads the files, and runs each
// scenario in a fresh child process (this binary with -child), so every
// figure of peak RSS growth belongs to that scenario alone. Scenarios:
//
//	plain10   download 10 files (25 MiB) with drive/v3, then upload a
//	          message of the same encoded size with gmail/v1 (5 MiB chunks)
//	compose10 compose.Service.Send of the same 10 files
//	memory10  a peer that downloads into memory and builds the message
//	          in a buffer before uploading it (for scale)
//	plain16   16 × (download 5 MiB, upload a same-size message), at most
//	          -cap at a time
//	compose16 16 concurrent compose sends of one 5 MiB file each, with
//	          MaxConcurrentSends = -cap
//
// Figures are printed as ratios against the plain baseline measured in
// the same run.
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
		drivemail = flag.String("drivemail", "bin/drivemail", "the drivemail binary whose emulator serves the run")
		child     = flag.String("child", "", "internal: run one scenario in this process")
		base      = flag.String("base", "", "internal: emulator origin")
		token     = flag.String("token", "", "internal: access token")
		ids       = flag.String("ids", "", "internal: comma-separated file ids")
		size      = flag.Int64("size", 0, "internal: encoded message size for the plain baseline")
		reps      = flag.Int("reps", 3, "repetitions of each scenario (medians are reported)")
		capFlag   = flag.Int("cap", 4, "MaxConcurrentSends for the 16-send scenario")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *child != "" {
		err = runChild(ctx, childArgs{mode: *child, base: *base, token: *token, ids: *ids, size: *size, cap: *capFlag})
	} else {
		err = runParent(ctx, *drivemail, *reps, *capFlag)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sendbench:", err)
		os.Exit(1)
	}
}
