// Command clientfilebench measures a file a chat client hands over (a
// ChatGPT file parameter) streamed into a Gmail message: a 20 MiB file
// from a local HTTPS file host, fetched and sent by compose in a child
// process whose peak RSS growth is read from /proc, against the same
// child sending a 20 MiB Drive file in the same run. The bytes that
// reached Gmail are read back and compared with what the host served.
//
// Processes: `drivemail emulator` (from -drivemail) is Google; this
// process is the file host (its own CA, trusted by the child alone) and
// reads the figures; the child (this binary with -child) is the sender,
// holding nothing but compose and its fetcher.
//
//	client file, 20 MiB   peak RSS growth                     goal < 20 MiB
//	                      time / the Drive file's time        (same run)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	child := flag.Bool("child", false, "run as the sender (internal)")
	drivemail := flag.String("drivemail", "bin/drivemail", "the drivemail binary whose emulator serves the run")
	mib := flag.Int("mib", 20, "size of each file, MiB")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *child {
		err = runChild(ctx, os.Stdin, os.Stdout)
	} else {
		err = run(ctx, *drivemail, *mib, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "clientfilebench:", err)
		os.Exit(1)
	}
}
