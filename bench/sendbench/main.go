// Command sendbench prints the send table of docs/operations.md: how a
// send through `drivemail serve` compares with the plain Google client
// libraries moving the same bytes, under the emulator's WAN profile and on
// loopback, with every baseline measured in the same run.
//
// Processes: `drivemail emulator` (from -drivemail) is Google; one
// `drivemail serve` per binary under test (-drivemail, and -before when
// given, so two builds print side by side) is the server whose wall time
// and peak RSS growth are measured; this process is the MCP client (the
// go-sdk) and runs the plain baselines. The user signs in through the
// server's real OAuth flow.
//
// Figures, per profile (medians of -reps runs; RSS is the worst run):
//
//	25 MiB in one file       send / max(plain download, best plain upload)         goal <= 1.15
//	10 files, 25 MiB         send / max(plain downloads at once, best plain upload) goal <= 1.15
//	10 small files (50 KiB)  send / one small file's send                          goal <= 1.05 (loopback: 2)
//	peak RSS growth of the server for the 10-file send                             goal <= 12 MiB
//	16 concurrent 5 MiB sends: all succeed; the server's peak RSS growth           goal < 64 MiB
//
// The yardstick is the plain client a competent user would write: the
// best plain upload is gmail/v1 sending the very message drivemail sent,
// read back from Gmail (so Gmail receives and parses the same bytes), in
// one request (googleapi.ChunkSize(0)) or in the library's default 16 MiB
// chunks, whichever was faster; the plain download is drive/v3's
// files.get?alt=media read to the end, a message's files all at once.
// Beside each figure, for one release, the same send against the old
// yardstick (16 MiB chunks, downloads one after another).
//
// Each figure has its floor beside it: what a relay whose upload is as
// fast as the best plain one could reach, measured in the same run. It
// has no byte for Gmail before the file's metadata and Drive's first
// byte (which it may await together), and opens its upload session
// meanwhile. Below the table, per server, each figure's CPU limit: the
// CPU the server and the emulator used per send, over the machine's
// cores, which is what bounds loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
)

func main() {
	var c config
	flag.StringVar(&c.drivemail, "drivemail", "bin/drivemail", "the drivemail binary: its emulator serves the run, and its server is measured (\"after\")")
	flag.StringVar(&c.before, "before", os.Getenv("DRIVEMAIL_BEFORE"), "another drivemail binary whose server is measured beside it (\"before\"), such as a build of the previous commit [DRIVEMAIL_BEFORE]")
	profiles := flag.String("profiles", "google,loopback", "WAN profiles to measure under, comma-separated, each a spec as drivemail emulator --wan takes it")
	flag.IntVar(&c.reps, "reps", 3, "runs of each figure (medians are reported)")
	flag.Parse()
	c.profiles = strings.Split(*profiles, ",")
	if c.reps < 1 {
		fmt.Fprintln(os.Stderr, "sendbench: -reps must be 1 or more")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sendbench:", err)
		os.Exit(1)
	}
}
