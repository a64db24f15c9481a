// Package refusal is the one way drivemail says no to a model.
//
// A Refusal is a request declined, or a send stopped, for a reason the
// caller can act on. It carries the sentence the model sees (what was
// wrong and what to do instead), a fixed Kind for logs and metrics (never
// the sentence, which may quote file names and addresses), and what
// became of the message. Every layer returns a *Refusal as it is; the
// tools show its Text, anything else as an internal error.
package refusal

import (
	"errors"
	"fmt"
)

// Kind names a refusal in logs and metrics: a short fixed code such as
// "too_many_files". docs/operations.md lists every kind.
type Kind string

// Delivery says what a refused send left behind. Requests that send
// nothing at all (a search, a malformed call) are NotSent.
type Delivery uint8

const (
	// NotSent: nothing was sent or saved, so trying again cannot send twice.
	NotSent Delivery = iota
	// MaybeSent: the whole message reached Gmail but no answer came; the
	// user must check the Sent (or Drafts) folder before trying again.
	MaybeSent
	// Sent: Gmail took the message though its answer was lost; it must
	// not be sent again.
	Sent
)

// Refusal is a refusal for the model. Its Error is Text.
type Refusal struct {
	Kind Kind
	// Text is one paragraph for the model: what was wrong and what to do.
	Text string
	// Delivery is what became of the message; NotSent unless a send got
	// as far as Gmail.
	Delivery Delivery
	// Err is the cause, when there is one: for errors.Is and the log line,
	// never shown to the model.
	Err error
}

func (r *Refusal) Error() string { return r.Text }

func (r *Refusal) Unwrap() error { return r.Err }

// New returns a refusal of kind k with a formatted sentence.
func New(k Kind, format string, args ...any) *Refusal {
	return &Refusal{Kind: k, Text: fmt.Sprintf(format, args...)}
}

// Wrap is New with a cause.
func Wrap(cause error, k Kind, format string, args ...any) *Refusal {
	return &Refusal{Kind: k, Text: fmt.Sprintf(format, args...), Err: cause}
}

// As finds the refusal in err's chain.
func As(err error) (*Refusal, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}

// KindOf is the kind of the refusal in err's chain, or "" when there is
// none (an internal error).
func KindOf(err error) Kind {
	if r, ok := As(err); ok {
		return r.Kind
	}
	return ""
}

// Unsent marks an internal error (one whose text is for the log, never
// the model) of a send that provably sent and saved nothing: it failed
// before its message could reach its end at Gmail. It lets the tools tell
// the user that a retry cannot send twice.
type Unsent struct{ Err error }

func (e *Unsent) Error() string { return e.Err.Error() }

func (e *Unsent) Unwrap() error { return e.Err }

// DeliveryOf says what a failed send left behind: a refusal says so
// itself, an Unsent error sent nothing, and any other error may have
// reached Gmail.
func DeliveryOf(err error) Delivery {
	if r, ok := As(err); ok {
		return r.Delivery
	}
	var u *Unsent
	if errors.As(err, &u) {
		return NotSent
	}
	return MaybeSent
}
