package compose

import (
	"errors"
	"fmt"
	"strings"

	"github.com/drivemail/drivemail/gmail"
)

// Refusal is a send that was refused for a reason the caller can fix.
// Its Error() is the sentence for the model: what was wrong and what to do
// instead. When Send returns a Refusal, nothing was sent.
type Refusal struct {
	Reason string
	// Err is the underlying cause, when there is one (for errors.Is).
	Err error
	// kind names the refusal in the log line (see kind).
	kind kind
}

func (r *Refusal) Error() string { return r.Reason }

func (r *Refusal) Unwrap() error { return r.Err }

// ModelFacing marks the error text as written for the model (the tools
// layer shows it as is).
func (r *Refusal) ModelFacing() bool { return true }

func refuse(k kind, format string, args ...any) *Refusal {
	return &Refusal{Reason: capitalize(fmt.Sprintf(format, args...)), kind: k}
}

// refuseErr wraps cause with a sentence.
func refuseErr(cause error, k kind, format string, args ...any) *Refusal {
	return &Refusal{Reason: capitalize(fmt.Sprintf(format, args...)), Err: cause, kind: k}
}

// capitalize starts a sentence that begins with an entry's label
// ("attachment 2 …") with a capital; field names such as body_html keep
// their spelling.
func capitalize(s string) string {
	if strings.HasPrefix(s, "attachment ") {
		return "A" + s[1:]
	}
	return s
}

// IsRefusal reports whether err is a Refusal.
func IsRefusal(err error) bool {
	var r *Refusal
	return errors.As(err, &r)
}

// Unsent is an internal failure of a send that provably sent (or saved)
// nothing: the message was abandoned before its end reached Gmail, or
// Gmail answered with an error. Its text is for the log, like any
// internal error; the tools layer uses the fact to tell the user a retry
// cannot send twice.
type Unsent struct{ Err error }

func (e *Unsent) Error() string { return e.Err.Error() }

func (e *Unsent) Unwrap() error { return e.Err }

// markUnsent wraps an internal error in Unsent unless Gmail may have the
// message: only a Gmail error whose final request got no answer (or
// whose 200 lost its body) leaves that open.
func markUnsent(err error) error {
	if err == nil || IsRefusal(err) {
		return err
	}
	var ge *gmail.Error
	if errors.As(err, &ge) && (ge.MaybeSent || ge.Accepted) {
		return err
	}
	return &Unsent{Err: err}
}
