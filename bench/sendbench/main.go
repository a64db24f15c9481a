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
//	25 MiB in one file       send / max(plain download, plain upload of the message)  goal <= 1.15
//	10 files, 25 MiB         send / max(sum of plain downloads, plain upload)         goal <= 1.2
//	10 small files (50 KiB)  send / one small file's send                            goal <= 2
//	peak RSS growth of the server for the 10-file send                               goal < 20 MiB
//	16 concurrent 5 MiB sends: all succeed; the server's peak RSS growth             goal < 64 MiB
//
// The plain upload is gmail/v1 with its default media options (and again in
// drivemail's 5 MiB chunks, for the limit chunks set) sending
// the very message drivemail sent, read back from Gmail (so Gmail
// receives and parses the same bytes); the plain download is drive/v3's
// files.get?alt=media, read to the end.
//
// Below each table, the limits the figures cannot pass, measured in the
// same run: on the 25 MiB figure, the waits before Gmail can have a byte
// (the metadata call, Drive's first byte) followed by a plain upload less
// the round trip that opens its session (a send opens its own meanwhile),
// whole and in drivemail's chunks; and per server, each figure's CPU
// limit: the CPU the server and the emulator used per send, over the
// machine's cores, which is what bounds loopback.
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
