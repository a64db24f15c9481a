package compose

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/drivemail/drivemail/gmail"
)

// Who a message is from. Without from or signature a message is from the
// signed-in account's own address, and no send-as setting is read. With
// either, the user's send-as addresses are read once, for this send
// (users.settings.sendAs.list; a scope that reads Gmail settings), before
// anything else is read or sent:
//
//   - from must be the primary address or an alias whose verification
//     Gmail accepted: Gmail sends mail whose From is any other address
//     from the default address instead, so such a from is refused, naming
//     the addresses that may be used;
//   - the From header carries the address's display name (an alias
//     without one takes the primary's, as the discovery document says
//     Gmail does), and its Reply-To address when it has one, as Gmail's
//     web UI writes both;
//   - signature adds that address's Gmail signature (signature.go).
//
// The list is not cached: an alias verified a minute ago works at once,
// and a send reads it once.

// maxSignatureBytes bounds the signature drivemail adds; Gmail's own
// settings page takes at most 10,000 characters.
const maxSignatureBytes = 64 << 10

// maxListed bounds the addresses a refusal lists.
const maxListed = 10

// sender is who a message is from, as its headers say it.
type sender struct {
	// address is the bare sending address; header the From header's
	// value (with the display name when the send-as settings were read).
	address, header string
	replyTo         string
	// signature is the signature to add (the zero one for none).
	signature signature
	// signed says the signature was asked for; name is the address it
	// belongs to, for the result.
	signed bool
}

// ReadsSendAs reports whether r needs the user's send-as settings: it
// asks for a signature, or names a from other than own, the account's
// own address. The tools refuse such a request, before any Google call,
// for a user who has not granted a scope that reads them.
func (r Request) ReadsSendAs(own string) bool {
	if r.Signature {
		return true
	}
	from := strings.TrimSpace(r.From)
	return from != "" && (own == "" || !strings.EqualFold(addressOf(from), own))
}

// senderFor is who req is from: own, the account's address, unless req
// reads the send-as settings (ReadsSendAs), which gc lists.
func senderFor(ctx context.Context, gc *gmail.Client, own string, req Request, draft bool) (sender, error) {
	if !req.ReadsSendAs(own) {
		return sender{address: own, header: own}, nil
	}
	list, err := mailRetry(ctx, func() ([]gmail.SendAs, error) { return gc.SendAs(ctx) })
	if err != nil {
		return sender{}, sendAsError(err, draft)
	}
	return pickSender(list, own, req, draft)
}

// pickSender chooses req's sending address among list, the user's
// send-as addresses.
func pickSender(list []gmail.SendAs, own string, req Request, draft bool) (sender, error) {
	var primary *gmail.SendAs
	for i := range list {
		if list[i].Primary {
			primary = &list[i]
			break
		}
	}
	want := own
	if from := strings.TrimSpace(req.From); from != "" {
		a, err := mail.ParseAddress(from)
		if err != nil {
			return sender{}, refuse(kindInvalidAddress, "\"from\" %q is not an email address. %s Give one of the account's send-as addresses: %s.",
				truncate(from, 80), nothing(draft), listVerified(list))
		}
		want = a.Address
	} else if primary != nil {
		want = primary.Address
	}
	var chosen *gmail.SendAs
	for i := range list {
		if strings.EqualFold(list[i].Address, want) {
			chosen = &list[i]
			break
		}
	}
	switch {
	case chosen == nil && strings.EqualFold(want, own) && strings.TrimSpace(req.From) == "":
		// A list without the account's own address: send as it, plainly.
		return sender{address: own, header: own, signed: req.Signature}, nil
	case chosen == nil:
		return sender{}, refuse(kindUnknownAlias, "%q is not one of this Gmail account's send-as addresses, so drivemail cannot send from it. %s "+
			"Use one of: %s; or leave out from to send as the account's own address. An address is added in Gmail's settings (Accounts, \"Send mail as\").",
			truncate(want, 80), nothing(draft), listVerified(list))
	case !chosen.Verified():
		return sender{}, refuse(kindUnverifiedAlias, "Gmail has not verified the send-as address %s yet, and would send the message from %s instead. %s "+
			"Its owner must confirm the verification email Gmail sent to it (or finish setting it up in Gmail's settings); until then use one of: %s.",
			chosen.Address, defaultAddress(list, own), nothing(draft), listVerified(list))
	}
	name := chosen.DisplayName
	if name == "" && primary != nil {
		name = primary.DisplayName
	}
	s := sender{address: chosen.Address, header: chosen.Address, replyTo: chosen.ReplyTo, signed: req.Signature}
	if name != "" {
		s.header = (&mail.Address{Name: name, Address: chosen.Address}).String()
	}
	if req.Signature {
		if len(chosen.Signature) > maxSignatureBytes {
			return sender{}, refuse(kindSignatureTooLarge, "The Gmail signature of %s is %s, more than drivemail adds (%d KiB). %s Send without signature, or shorten it in Gmail's settings.",
				chosen.Address, mib(int64(len(chosen.Signature))), maxSignatureBytes>>10, nothing(draft))
		}
		s.signature = newSignature(chosen.Signature)
	}
	return s, nil
}

// listVerified lists the addresses Gmail sends from as they are, the
// primary first, at most maxListed of them.
func listVerified(list []gmail.SendAs) string {
	var out []string
	n := 0
	for _, a := range list {
		if !a.Verified() || !plainAddress(a.Address) {
			continue
		}
		n++
		if len(out) < maxListed {
			out = append(out, a.Address)
		}
	}
	if len(out) == 0 {
		return "none is set up"
	}
	s := strings.Join(out, ", ")
	if n > len(out) {
		s += fmt.Sprintf(" (and %d more)", n-len(out))
	}
	return s
}

// plainAddress reports whether a, from Gmail, is a bare address that a
// sentence may show as it is.
func plainAddress(a string) bool {
	p, err := mail.ParseAddress(a)
	return err == nil && p.Address == a && len(a) <= 254
}

// defaultAddress is the address Gmail sends from in place of one it does
// not accept: the default send-as address.
func defaultAddress(list []gmail.SendAs, own string) string {
	for _, a := range list {
		if a.Default && plainAddress(a.Address) {
			return a.Address
		}
	}
	return own
}

// sendAsError words a failed read of the send-as settings.
func sendAsError(err error, draft bool) error {
	nothingDone := nothing(draft)
	switch {
	case errors.Is(err, gmail.ErrAPIDisabled):
		return gmailAPIDisabled(err, draft)
	case errors.Is(err, gmail.ErrScope):
		return refuseErr(err, kindSendAsScope, "\"from\" and \"signature\" need permission to read this account's Gmail settings (its send-as addresses and signatures), which this Google account has not granted to drivemail. %s "+
			"Reconnect drivemail (sign in again) and allow reading mail, or leave them out.", nothingDone)
	case errors.Is(err, gmail.ErrUnauthorized):
		return refuseErr(err, kindGmailUnauthorized, "Google no longer accepts this account's authorization (it expired or was revoked). %s Reconnect drivemail (sign in again).", nothingDone)
	case errors.Is(err, gmail.ErrAnswerTooLarge):
		return refuseErr(err, kindSendAsUnreadable, "This account's Gmail send-as settings are larger than drivemail reads. %s Leave out from and signature.", nothingDone)
	case errors.Is(err, gmail.ErrDailyQuota):
		return refuseErr(err, kindGmailDailyQuota, "drivemail has used up its daily Gmail quota, which all its users share, so the send-as addresses could not be read. %s "+
			"Google resets it at midnight Pacific time. Tell whoever runs drivemail: they can ask Google for a higher quota in the Google Cloud console.", nothingDone)
	case errors.Is(err, gmail.ErrForbidden):
		return refuseErr(err, kindGmailForbidden, "Gmail refused to let drivemail read this account's send-as settings (an administrator may have turned off such access for apps). %s "+
			"Leave out from and signature, or ask the account's Google Workspace administrator.", nothingDone)
	case errors.Is(err, gmail.ErrRateLimited), errors.Is(err, gmail.ErrUnavailable), errors.Is(err, gmail.ErrStalled):
		return refuseErr(err, kindMailUnavailable, "Gmail is busy or unavailable right now, so the send-as addresses could not be read. %s Try again in a minute.", nothingDone)
	}
	return fmt.Errorf("read the send-as addresses: %w", err)
}
