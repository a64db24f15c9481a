package tools

import (
	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/refusal"
)

// from and signature read the user's Gmail send-as settings, which a
// scope that reads Gmail settings allows: gmail.readonly, which a server
// asks for with --read-mail. They are listed only where that scope is
// granted (the mail definitions, mail_filter.go); a call that sends them
// elsewhere is refused before any Google call, saying what would make
// them work.

// parseSendAs reads from and signature.
func parseSendAs(m object, r *compose.Request) error {
	var err error
	if r.From, err = m.str("from"); err != nil {
		return err
	}
	r.Signature, err = m.bool("signature")
	return err
}

// checkSendAs refuses from and signature where the send-as settings
// cannot be read; from as the account's own address needs none.
func (h *handlers) checkSendAs(acct *account.Account, r compose.Request) error {
	if !r.ReadsSendAs(acct.Email()) || acct.MayReadSendAs() {
		return nil
	}
	if !h.deps.ReadMailEnabled {
		return refusal.New(kindMailDisabled, "This drivemail server does not ask Google for permission to read Gmail (it was started without --read-mail), so \"from\" and \"signature\" cannot work: "+
			"drivemail reads the account's send-as addresses and signatures to check an alias before sending. Nothing was sent. "+
			"Leave them out to send from the account's own address; or ask whoever runs drivemail to restart it with --read-mail, then reconnect (sign in again).")
	}
	return refusal.New(kindMailScope, "\"from\" and \"signature\" need permission to read the user's Gmail (its send-as addresses and signatures), which this Google account has not granted to drivemail. "+
		"Nothing was sent. Reconnect drivemail (sign in again) and allow reading mail; or leave them out to send from the account's own address.")
}
