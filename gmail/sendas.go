package gmail

import (
	"context"
	"strings"

	"google.golang.org/api/googleapi"
)

// A user's send-as addresses are read with users.settings.sendAs.list,
// which gmail.readonly, gmail.settings.basic, gmail.modify and
// mail.google.com allow (gmail.send and gmail.compose do not). The
// answer is unpaged; Gmail allows about 100 addresses an account.

// MaxSendAs is the most send-as addresses SendAs returns; Gmail allows
// 99 aliases besides the primary.
const MaxSendAs = 100

// Verification statuses of a custom "from" alias
// (SendAs.verificationStatus in Gmail's discovery document).
const (
	VerificationAccepted = "accepted"
	VerificationPending  = "pending"
)

// SendAs is one address the user may send as: the primary (the
// account's own address) or a custom "from" alias. Every string in it
// is the user's own setting.
type SendAs struct {
	Address string
	// DisplayName is the name Gmail writes in From; for an alias, ""
	// means the primary's.
	DisplayName string
	// ReplyTo is the address Gmail's web UI puts in a Reply-To header
	// for mail from this address ("" for none).
	ReplyTo string
	// Signature is the HTML Gmail's web UI adds to new mail from this
	// address; the API adds none.
	Signature string
	Primary   bool
	Default   bool
	// Verification is VerificationAccepted or VerificationPending for an
	// alias, "" for the primary.
	Verification string
}

// Verified reports whether Gmail sends mail from a as it says: the
// primary, or an alias whose verification was accepted. Gmail sends mail
// from any other address from the default address instead.
func (a SendAs) Verified() bool { return a.Primary || a.Verification == VerificationAccepted }

// sendAsFields selects what SendAs reads of each address.
const sendAsFields = "sendAs(sendAsEmail,displayName,replyToAddress,signature,isPrimary,isDefault,verificationStatus)"

// SendAs lists the user's send-as addresses, the primary first as Gmail
// answers them, at most MaxSendAs of them. It needs a scope that reads
// Gmail settings (gmail.readonly or gmail.settings.basic); without one
// the error wraps ErrScope.
func (c *Client) SendAs(ctx context.Context) ([]SendAs, error) {
	users, err := c.readService(ctx, metadataLimit)
	if err != nil {
		return nil, err
	}
	res, err := users.Settings.SendAs.List("me").Fields(googleapi.Field(sendAsFields)).Context(ctx).Do()
	if err != nil {
		return nil, c.readErr("settings.sendAs.list", err)
	}
	out := make([]SendAs, 0, min(len(res.SendAs), MaxSendAs))
	for _, a := range res.SendAs {
		if a == nil || len(out) == MaxSendAs {
			continue
		}
		out = append(out, SendAs{
			Address:      strings.TrimSpace(a.SendAsEmail),
			DisplayName:  strings.TrimSpace(a.DisplayName),
			ReplyTo:      strings.TrimSpace(a.ReplyToAddress),
			Signature:    a.Signature,
			Primary:      a.IsPrimary,
			Default:      a.IsDefault,
			Verification: a.VerificationStatus,
		})
	}
	return out, nil
}
