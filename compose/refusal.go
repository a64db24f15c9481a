package compose

import (
	"errors"
	"fmt"
	"strings"

	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/refusal"
)

// Send's refusals are *refusal.Refusal values. When Send returns one,
// nothing was sent unless its Delivery says otherwise (maybe_sent,
// sent_unconfirmed).

func refuse(k kind, format string, args ...any) *refusal.Refusal {
	return refusal.New(k, "%s", capitalize(fmt.Sprintf(format, args...)))
}

// refuseErr wraps cause with a sentence.
func refuseErr(cause error, k kind, format string, args ...any) *refusal.Refusal {
	return refusal.Wrap(cause, k, "%s", capitalize(fmt.Sprintf(format, args...)))
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

// isRefusal reports whether err is, or wraps, a refusal.
func isRefusal(err error) bool {
	_, ok := refusal.As(err)
	return ok
}

// settle gives a failed send its final form. A refusal of compose's own
// is returned as it is. A refusal from below an internal error (Google's
// grant is gone: the user's token source refused a Drive or Gmail
// request) is the user's to act on too: its sentence then says that
// nothing was sent. Any other error is internal, and an *refusal.Unsent
// unless Gmail may have the message: only a Gmail error whose final
// request got no answer (or whose 200 lost its body) leaves that open.
func settle(err error, draft bool) error {
	if err == nil {
		return nil
	}
	if r, ok := err.(*refusal.Refusal); ok {
		return r
	}
	var ge *gmail.Error
	if errors.As(err, &ge) && (ge.MaybeSent || ge.Accepted) {
		return err
	}
	if r, ok := refusal.As(err); ok {
		return &refusal.Refusal{Kind: r.Kind, Text: r.Text + " " + nothing(draft), Err: err}
	}
	return &refusal.Unsent{Err: err}
}
