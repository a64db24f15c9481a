package compose

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/redact"
	"github.com/drivemail/drivemail/internal/refusal"
)

// A saved draft is sent as it is, by Gmail (drafts.send): nothing
// streams through drivemail. Gmail deletes the draft as it sends it, so
// a draft goes once: a second send of the same id finds no draft, and a
// send whose answer was lost is settled by asking whether the draft is
// still there.

// DraftSent is what SendDraft sent: the new message Gmail filed in the
// draft's place.
type DraftSent struct {
	ID       string `json:"id"`
	ThreadID string `json:"thread_id"`
	// MessageID is the Message-ID header the draft carried.
	MessageID string `json:"message_id,omitempty"`
	// From is the address the draft is from; FromUnchecked says it is
	// not the account's own and the send-as settings could not be read
	// to check that Gmail sends from it (it sends mail from an address it
	// has not verified from the default address instead).
	From          string `json:"from"`
	FromUnchecked bool   `json:"-"`
	// Recipients are the draft's To and Cc addresses, as written.
	Recipients []string `json:"-"`
	Subject    string   `json:"-"`
}

// settleTimeout bounds the drafts.get that tells whether a send whose
// answer was lost went.
const settleTimeout = 15 * time.Second

// SendDraft sends acct's Gmail draft id as it is. confirm, when set, is
// shown the draft's Summary once it has been read and checked, before
// Gmail is asked to send it, as Options.Confirm is for Send. Its errors
// are those of Send: a *refusal.Refusal for the model, any other
// internal.
func (s *Service) SendDraft(ctx context.Context, acct *account.Account, id string, confirm func(context.Context, Summary) error) (DraftSent, error) {
	gc, err := acct.Gmail(ctx)
	if err != nil {
		return DraftSent{}, &refusal.Unsent{Err: err}
	}
	start := s.cfg.Now()
	res, err := s.sendDraft(ctx, acct, gc, id, confirm)
	took := s.cfg.Now().Sub(start)
	var nc *notConfirmed
	if errors.As(err, &nc) {
		s.logNotConfirmed(ctx, acct, nc.err, took, "from_draft", true)
		return DraftSent{}, nc.err
	}
	s.logDraftOutcome(ctx, acct, res, err, took)
	return res, err
}

func (s *Service) sendDraft(ctx context.Context, acct *account.Account, gc *gmail.Client, id string, confirm func(context.Context, Summary) error) (DraftSent, error) {
	d, err := mailRetry(ctx, func() (gmail.Draft, error) { return gc.Draft(ctx, id) })
	if err != nil {
		return DraftSent{}, draftError(err, id)
	}
	own, err := s.ownAddress(ctx, acct, gc)
	if err != nil {
		return DraftSent{}, gmailRefusal(err, false, false, s.cfg.Now())
	}
	from := addressOf(d.From)
	if from == "" {
		from = own
	}
	// A draft from another address is checked as a from would be, where
	// the send-as settings can be read: Gmail would send it from the
	// default address instead of an unverified one.
	unchecked := !strings.EqualFold(from, own) && !acct.MayReadSendAs()
	if !strings.EqualFold(from, own) && !unchecked {
		if _, err := senderFor(ctx, gc, own, Request{From: from}, false); err != nil {
			return DraftSent{}, err
		}
	}
	if confirm != nil {
		if err := confirm(ctx, draftSummary(d, from)); err != nil {
			return DraftSent{}, &notConfirmed{err}
		}
	}
	sent, err := gc.SendDraft(ctx, id)
	if err != nil {
		return DraftSent{}, s.draftSendError(ctx, gc, err, id)
	}
	res := DraftSent{ID: sent.ID, ThreadID: sent.ThreadID, MessageID: d.RFCMessageID, From: from, FromUnchecked: unchecked, Subject: d.Subject}
	for _, v := range []string{d.To, d.Cc} {
		for _, a := range parseAddrs(v) {
			res.Recipients = append(res.Recipients, a.Address)
		}
	}
	return res, nil
}

// draftError words a failed read of the draft, before anything was sent.
func draftError(err error, id string) error {
	switch {
	case errors.Is(err, gmail.ErrNotFound), errors.Is(err, gmail.ErrRejected):
		return unknownDraft(err, id)
	case errors.Is(err, gmail.ErrScope):
		return draftScope(err)
	}
	return mailLookupError(err, "", id, false)
}

// unknownDraft is the refusal for a draft id Gmail does not have.
func unknownDraft(err error, id string) error {
	return refuseErr(err, kindUnknownDraft, "No Gmail draft with id %s is in this account's Drafts: it was sent already, deleted, or is another account's. Nothing was sent. "+
		"Check Sent for it, or save the message again with create_draft.", truncate(id, 100))
}

func draftScope(err error) error {
	return refuseErr(err, kindGmailScope, "Sending a draft needs permission to manage the user's Gmail drafts, which this Google account has not granted. Nothing was sent. "+
		"Reconnect drivemail (sign in again) and allow drafts, or send the message with send_email.")
}

// draftSendError words a failed drafts.send. When no answer came, or a
// 5xx, Gmail may have sent the draft: whether it is still a draft says.
func (s *Service) draftSendError(ctx context.Context, gc *gmail.Client, err error, id string) error {
	var ge *gmail.Error
	switch {
	case errors.Is(err, gmail.ErrNotFound):
		return unknownDraft(err, id) // sent by another call meanwhile
	case errors.Is(err, gmail.ErrScope):
		return draftScope(err)
	case errors.As(err, &ge) && (ge.Code == 0 || ge.Code >= 500):
	default:
		return gmailRefusal(err, false, false, s.cfg.Now())
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	_, gerr := gc.Draft(cctx, id)
	switch {
	case gerr == nil:
		return refuseErr(err, kindGmailUnavailable, "Gmail did not answer, and the draft is still in Drafts: nothing was sent. Try again in a minute; a draft is sent once at most.")
	case errors.Is(gerr, gmail.ErrNotFound):
		return delivered(refusal.MaybeSent, refuseErr(err, kindMaybeSent, "Gmail did not confirm the send, but the draft is no longer in Drafts, so it was most likely sent (or deleted meanwhile). "+
			"Check the Sent folder; sending the draft again cannot send it twice."))
	}
	return delivered(refusal.MaybeSent, refuseErr(err, kindMaybeSent, "Gmail did not confirm the send, and drivemail could not tell whether the draft is still in Drafts. "+
		"Check the Sent folder; sending the draft again cannot send it twice, since Gmail deletes a draft as it sends it."))
}

// logDraftOutcome writes a sent draft's audit line ("message sent", as
// for any message) or its refusal, never addresses or the subject.
func (s *Service) logDraftOutcome(ctx context.Context, acct *account.Account, res DraftSent, err error, took time.Duration) {
	attrs := []any{"draft", false, "from_draft", true, "took_ms", took.Milliseconds()}
	if acct.ID() != "" {
		attrs = append(attrs, "user", acct.ID())
	}
	switch r, ok := refusal.As(err); {
	case err == nil:
		s.cfg.Logger.InfoContext(ctx, "message sent", append(attrs, "recipients", len(res.Recipients), "message_id", res.ID, "thread_id", res.ThreadID)...)
	case ok:
		attrs = append(attrs, "refusal", string(r.Kind))
		if cause := causeText(r.Err); cause != "" {
			attrs = append(attrs, "cause", cause)
		}
		s.cfg.Logger.InfoContext(ctx, "send refused", attrs...)
	default:
		s.cfg.Logger.WarnContext(ctx, "send failed", append(attrs, "err", redact.Quoted(err.Error()))...)
	}
}
