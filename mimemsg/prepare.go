package mimemsg

import (
	"context"
	"errors"
	"io"
)

// Prepared is a validated message, ready to stream once.
type Prepared struct {
	m Message
}

// Prepare validates every header and part of m — addresses, subject,
// ids, names, content types, the folded length of every header — without
// opening any part. Its errors are *InputError.
func Prepare(m Message) (*Prepared, error) {
	return nil, errors.New("mimemsg: Prepare not implemented yet")
}

// MessageID returns the Message-ID header value, with angle brackets.
func (p *Prepared) MessageID() string { return "" }

// Stream writes the message to w in one pass, opening each part when it
// is reached. On error the output is incomplete and must be discarded
// (with io.Pipe: CloseWithError, never Close). Errors: *LimitError,
// errors from Open and the part streams (wrapped, with the part's name),
// and errors from w.
func (p *Prepared) Stream(ctx context.Context, w io.Writer) (Written, error) {
	return Written{}, errors.New("mimemsg: Stream not implemented yet")
}
