// Command mailbench prints the mail figures of docs/operations.md: a
// 20 MiB Gmail attachment forwarded through `drivemail serve` (send_email
// with forward), and the same attachment saved into Drive (save_to_drive),
// each against the plain Google client libraries moving the same bytes in
// the same run, with the server's peak RSS growth.
//
// Processes: `drivemail emulator` (from -drivemail) is Google, with the
// message in the bench user's inbox; `drivemail serve --read-mail` is the
// server measured; this process is the MCP client (the go-sdk) and runs
// the baselines. The user signs in through the server's real OAuth flow.
//
// Figures (medians of -reps runs; RSS is the worst run):
//
//	forward: time / (plain attachments.get + plain messages.send of the same size)   goal <= 1.3
//	forward: peak RSS growth of the server                                           goal < 20 MiB
//	save_to_drive: time / (plain attachments.get + plain Drive files.create)          goal <= 1.3
//	save_to_drive: peak RSS growth of the server                                     goal < 20 MiB
//
// The plain attachments.get is gmail/v1's, which decodes the whole answer
// in memory; the plain send and upload use their library's default media
// options.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	var c config
	flag.StringVar(&c.drivemail, "drivemail", "bin/drivemail", "the drivemail binary: its emulator serves the run, and its server is measured")
	flag.StringVar(&c.profile, "profile", "loopback", "the WAN profile to measure under, as drivemail emulator --wan takes it (google: Google's latency and bandwidth)")
	flag.IntVar(&c.reps, "reps", 1, "runs of each figure (medians are reported)")
	flag.Parse()
	if c.reps < 1 {
		fmt.Fprintln(os.Stderr, "mailbench: -reps must be 1 or more")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ok, err := run(ctx, c, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mailbench:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}
