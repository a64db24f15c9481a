package compose

import (
	"math"

	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/mimemsg"
)

// What a streaming send holds, which it reserves from the sending budget
// (admission) before its first byte. Each term is taken from the number
// the code that allocates it uses, so that the reservation follows that
// code when it changes:
//
//   - the Gmail upload's buffer, which gmail sizes from the planned
//     message (gmail.Client.UploadMemory): a message expected under a
//     chunk gets a buffer just over its size, any other a whole chunk;
//   - the MIME writer's buffers (mimemsg.StreamBuffers);
//   - what the HTTP transport keeps unread of the answers the send has
//     open at once (transportHold): the part being written and those
//     prefetch opened ahead of it, each at most one stream window
//     (google.StreamWindow), a smaller answer its size, bytes already in
//     memory nothing.
//
// Left out: readers' own buffers of a few tens of KiB (a Gmail
// attachment's decoder, an archive inspector), and whatever a send held
// before it was admitted: its request's arguments and, for a client's
// file, the answer opened at once because its URL is short-lived.

// MaxSendMemory is the most one send reserves: a whole chunk (a message
// of unknown size, or one past a chunk), the writer's buffers, and the
// most its open answers hold (maxTransportHold). serve refuses a budget
// (Config.SendMemory) below it; given one, admission takes a send that
// reserves more than the whole budget as reserving the budget, so that
// every send can stream once the others are done.
const MaxSendMemory = gmail.DefaultChunkSize + mimemsg.StreamBuffers + maxTransportHold

// maxTransportHold is the most transportHold gives: a window for the
// part being written, and for those opened ahead at most prefetchBytes
// in all, or the next alone when it is larger, one window.
const maxTransportHold = google.StreamWindow + max(google.StreamWindow, prefetchBytes)

// DefaultSendMemory is the sending budget of a replica left to its
// default: room for 8 of the largest sends at once, the bound that 8
// send slots (the old default) set by counting every send as the
// largest, rounded up to a MiB. Small messages, which hold little, share
// what large ones leave.
const DefaultSendMemory = (8*MaxSendMemory + 1<<20 - 1) &^ (1<<20 - 1)

// SendMemoryFor is the budget that lets n of the largest sends stream at
// once: what n send slots bounded when each was counted as the largest.
func SendMemoryFor(n int) int64 {
	if n <= 0 {
		return 0
	}
	if int64(n) > math.MaxInt64/MaxSendMemory {
		return math.MaxInt64
	}
	return int64(n) * MaxSendMemory
}

// reservation is what a send of out reserves when its upload holds
// upload bytes (gmail.Client.UploadMemory of the planned size).
func reservation(upload int64, out *outgoing) int64 {
	return upload + mimemsg.StreamBuffers + transportHold(out.unread, out.sizes)
}

// transportHold is the most the transport keeps unread, at any moment
// of a pass, of the answers open at once: with the writer on part cur,
// the parts prefetch has opened and the writer has not finished
// (opened), each holding at most unread[k].
func transportHold(unread, sizes []int64) int64 {
	var most int64
	for cur := range unread {
		var sum int64
		for _, n := range unread[cur:opened(sizes, cur, prefetchAhead, prefetchBytes)] {
			sum += n
		}
		most = max(most, sum)
	}
	return most
}

// unreadHold is the most of the part's answer the transport may keep
// unread: one stream window, or the whole answer when it is smaller (a
// Gmail attachment arrives base64-encoded in JSON, a third larger);
// nothing for bytes the request carried, which are in memory already.
func (it *item) unreadHold() int64 {
	switch {
	case it.plan.action == actData:
		return 0
	case it.plan.size < 0:
		return google.StreamWindow
	case it.plan.action == actMail:
		return min(google.StreamWindow, encodedLen(it.plan.size))
	}
	return min(google.StreamWindow, it.plan.size)
}
