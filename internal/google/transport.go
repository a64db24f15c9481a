package google

import "net/http"

// StreamWindow is the most one answer from Google may hold unread in the
// transport over HTTP/2: its stream's receive window, set here rather
// than left to Go's default (4 MiB today), so that the bound drivemail
// states holds. A download opened ahead of the MIME writer buffers at most
// this much until the writer reaches it.
//
// It is not lower because the same window is the read-ahead of the file
// being sent: while Gmail takes one 5 MiB chunk (about 0.4 s at Google),
// Drive fills the window, and the next chunk needs 3.75 MiB of file
// bytes. With 1 MiB each later chunk would wait about 90 ms on Drive
// (2.75 MiB at 33 MB/s): half a second on a 25 MiB send. The window also
// bounds a stream to one window per round trip: 4 MiB is 200 MB/s at
// 20 ms.
const StreamWindow = 4 << 20

// Transport is the HTTP transport of every Google call: net/http's
// default one, with each HTTP/2 stream's receive window StreamWindow.
// HTTP/1.1 (the emulator over plain http) has no such window: an unread
// answer waits in the kernel's socket buffers.
func Transport() *http.Transport { return newTransport(StreamWindow) }

func newTransport(window int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: window}
	return t
}
