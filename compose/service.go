package compose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/gmail"
	"github.com/drivemail/drivemail/internal/redact"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/mimemsg"
)

// Config tunes a Service. The user's Google clients, and their timeouts
// and chunk size, come with the account each Send is given
// (account.Options).
type Config struct {
	// SendMemory is the memory the messages streaming at once may
	// reserve, each what it will hold (reservation: its upload buffer,
	// from its planned size, and its downloads' transport buffers). Extra
	// sends wait their turn, served by user (admission). Default
	// DefaultSendMemory; at least one send always fits.
	SendMemory int64
	// MaxConcurrentSends caps the messages streaming at once, whatever
	// they hold. Default 64.
	MaxConcurrentSends int
	// MaxSendsPerUser caps one user's messages streaming at once, so that
	// one user cannot hold every slot while others wait. Default 3.
	MaxSendsPerUser int
	// SendQueueTimeout bounds a send's wait for its turn; past it the
	// send is refused with nothing sent. Default 30 s.
	SendQueueTimeout time.Duration
	// Logger gets one line per send (never addresses, bodies or tokens).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// ProfileTTL is how long a user's sending address is cached (default
	// 10 minutes).
	ProfileTTL time.Duration
	// Files fetches the files a chat client hands over by URL
	// (ClientFile); nil refuses them.
	Files *clientfile.Fetcher
	// Transfers resolves file-transfer URIs (handle.Transfer) to Drive
	// files; nil refuses them (serve without --file-transfer).
	Transfers TransferResolver
}

// Options tunes one Send.
type Options struct {
	// Draft saves a Gmail draft instead of sending.
	Draft bool
	// Progress, when set, is called as encoded message bytes stream to
	// Gmail; total is the expected size, or 0 while it is unknown (a
	// message with exports).
	Progress func(done, total int64)
	// ReadMail says the user granted a Gmail read scope this server asks
	// for (serve --read-mail): a thread_id reply then reads its thread
	// (withThreadSubject), to answer its latest message when thread_id
	// comes alone and to take the thread's subject when its own is
	// another. Without it, no mail is read but what reply_to, forward or
	// a Gmail attachment names.
	ReadMail bool
	// Confirm, when set, is shown the message once every check has
	// passed, before any of it is downloaded and before the send waits
	// for its turn (so a send waiting for its user holds no memory and no
	// open download): nil sends it; an error ends the send with that
	// error as it is, nothing downloaded and nothing sent. It may take as
	// long as its user does.
	Confirm func(ctx context.Context, s Summary) error
}

// Service sends messages. It is safe for concurrent use.
type Service struct {
	cfg      Config
	admit    *admission
	profiles *profileCache
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.SendMemory <= 0 {
		cfg.SendMemory = DefaultSendMemory
	}
	if cfg.MaxConcurrentSends <= 0 {
		cfg.MaxConcurrentSends = DefaultMaxConcurrentSends
	}
	if cfg.MaxSendsPerUser <= 0 {
		cfg.MaxSendsPerUser = DefaultMaxSendsPerUser
	}
	if cfg.SendQueueTimeout <= 0 {
		cfg.SendQueueTimeout = DefaultSendQueueTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ProfileTTL <= 0 {
		cfg.ProfileTTL = 10 * time.Minute
	}
	return &Service{
		cfg:      cfg,
		admit:    newAdmission(cfg.SendMemory, cfg.MaxConcurrentSends, cfg.MaxSendsPerUser, cfg.SendQueueTimeout),
		profiles: newProfileCache(cfg.ProfileTTL, cfg.Now),
	}
}

// Send turns req into one Gmail message (or draft) from acct, the
// signed-in user, with their Google clients. Everything that can be
// checked before downloading is checked first; then every part streams
// from Drive through the MIME writer into Gmail in one pass.
//
// A *refusal.Refusal error is for the model; its Delivery says whether
// anything was sent (nothing, but for maybe_sent and sent_unconfirmed).
// Any other error is internal: log it, show a generic message. An
// internal error that is a *refusal.Unsent (errors.As) provably sent
// nothing.
func (s *Service) Send(ctx context.Context, acct *account.Account, req Request, opts Options) (Result, error) {
	g, err := clientsOf(ctx, acct)
	if err != nil {
		// Without the user's Google clients nothing ran, so nothing can
		// have reached Gmail; a lost grant keeps its own sentence.
		return Result{}, &refusal.Unsent{Err: err}
	}
	start := s.cfg.Now()
	var queued time.Duration
	res, err := s.send(ctx, acct, g, req, opts, &queued)
	var nc *notConfirmed
	if errors.As(err, &nc) {
		if nc.err != errPreviewed {
			s.logNotConfirmed(ctx, acct, nc.err, s.cfg.Now().Sub(start),
				"draft", opts.Draft, "recipients", len(req.To)+len(req.Cc)+len(req.Bcc), "entries", len(req.Attachments))
		}
		return Result{}, nc.err
	}
	err = settle(err, opts.Draft)
	s.logOutcome(ctx, acct, req, opts, res, err, s.cfg.Now().Sub(start), queued)
	return res, err
}

// notConfirmed carries the error Options.Confirm ended a send with.
type notConfirmed struct{ err error }

func (e *notConfirmed) Error() string { return e.err.Error() }

// clients are the user's Google clients a send uses.
type clients struct {
	drive *drive.Client
	gmail *gmail.Client
}

func clientsOf(ctx context.Context, acct *account.Account) (clients, error) {
	dc, err := acct.Drive(ctx)
	if err != nil {
		return clients{}, err
	}
	gc, err := acct.Gmail(ctx)
	return clients{drive: dc, gmail: gc}, err
}

// send does Send's work with the user's clients; it sets *queued to the
// time it waited for its turn to stream.
func (s *Service) send(ctx context.Context, acct *account.Account, g clients, req Request, opts Options, queued *time.Duration) (Result, error) {
	gc := g.gmail
	own, err := s.ownAddress(ctx, acct, gc)
	if err != nil {
		return Result{}, gmailRefusal(err, opts.Draft, false, s.cfg.Now())
	}
	// Who sends, before anything else is read: a from Gmail would not
	// send as is refused now.
	from, err := senderFor(ctx, gc, own, req, opts.Draft)
	if err != nil {
		return Result{}, err
	}
	// File-transfer URIs become the Drive files their uploads made.
	if req, err = resolveTransfers(ctx, s.cfg.Transfers, acct, req); err != nil {
		return Result{}, err
	}
	// A reply or a forward starts from the message it answers or passes on.
	mail := newMailLookup(gc)
	if req, err = withOriginal(ctx, mail, req, own, opts.Draft); err != nil {
		return Result{}, err
	}
	// A thread_id reply completes itself from its thread, where mail may be read.
	if opts.ReadMail {
		if req, err = withThreadSubject(ctx, gc, req, opts.Draft); err != nil {
			return Result{}, err
		}
	}
	// 0 validate: everything that needs no network.
	c, err := validate(req, from, s.cfg.Now())
	if err != nil {
		return Result{}, err
	}
	// 1 resolve: Drive metadata of every Drive file.
	drv := driveAdapter{g.drive}
	if err := resolve(ctx, drv, c.items, opts.Draft); err != nil {
		return Result{}, err
	}
	// …Gmail metadata of every Gmail attachment…
	if err := resolveMail(ctx, mail, c.items, opts.Draft); err != nil {
		return Result{}, err
	}
	// …and the client's files, opened at once (their URLs are short-lived),
	// their bodies held for the stream.
	defer closeClientFiles(c.items)
	if err := openClientFiles(ctx, s.cfg.Files, c.items, opts.Draft); err != nil {
		return Result{}, err
	}
	// 2 plan, and the limits known from metadata.
	mp, err := planMessage(c.req, c.items)
	if err != nil {
		return Result{}, mailLimitAdvice(err, c.items)
	}
	out, err := c.assemble(mp, drv)
	if err != nil {
		return Result{}, err
	}
	// 3 check what metadata cannot tell: archives' contents, by Range reads,
	// and whether the recipients can open each file that goes as a link.
	if err := checkArchives(ctx, drv, mp, opts.Draft); err != nil {
		return Result{}, err
	}
	if err := checkLinks(ctx, drv, acct, c.req, mp, opts.Draft, s.cfg.Now()); err != nil {
		return Result{}, err
	}
	// The user's word, when it is asked for: after every check, before the
	// turn, any sharing and the first byte. The client's files are let go meanwhile
	// (their hosts are not kept waiting on the user) and opened again to
	// stream, held to the size they had.
	if opts.Confirm != nil {
		closeClientFiles(c.items)
		if err := opts.Confirm(ctx, summarize(c, mp, opts.Draft)); err != nil {
			return Result{}, &notConfirmed{err}
		}
	}
	// 4 stream, once the memory it will hold is free (the user's turn).
	waitFrom := s.cfg.Now()
	release, err := s.admit.acquire(ctx, acct.ID(), reservation(gc.UploadMemory(mp.estimate), out))
	*queued = s.cfg.Now().Sub(waitFrom)
	if err != nil {
		return Result{}, err
	}
	defer release()
	// The share options, every check passed, just before the stream.
	if err := shareLinks(ctx, drv, mp, opts.Draft); err != nil {
		return Result{}, err
	}
	sent, written, err := s.stream(ctx, gc, c, out, mp, opts)
	if err != nil {
		return Result{}, sharedBefore(err, mp, opts.Draft)
	}
	res := result(mp, sent, written)
	addMailSources(&res, mp)
	res.MessageID, res.Subject = c.messageID, c.req.Subject
	res.Recipients = append(append([]string(nil), c.req.To...), c.req.Cc...)
	res.AskedThread = c.req.ThreadID
	res.SubjectFromThread = c.req.subjectFromThread
	res.From, res.Signed, res.Signature = from.address, from.signed, from.signature.html != ""
	if opts.Draft {
		res.Link = gc.DraftLink(own, res.ThreadID)
	}
	return res, nil
}

// ownAddress is the signed-in Google account's address, the From of a
// message without from, which the account carries. Gmail's
// users.getProfile is asked only when the account has no address,
// because it needs a scope beyond gmail.send (compose, readonly,
// metadata or modify).
func (s *Service) ownAddress(ctx context.Context, acct *account.Account, gc *gmail.Client) (string, error) {
	if acct.Email() != "" {
		return acct.Email(), nil
	}
	return s.profiles.from(ctx, acct.ID(), gc.Profile)
}

// driveAPI is what compose needs of Drive; *drive.Client via driveAdapter.
type driveAPI interface {
	Lookup(ctx context.Context, ref drive.Ref) (drive.File, error)
	// SheetTabs lists a spreadsheet's tabs; needed says a tab choice
	// depends on them (a disabled Sheets API is then logged for the
	// operator), not only a tab's name in the result.
	SheetTabs(ctx context.Context, f drive.File, needed bool) ([]drive.Sheet, error)
	Download(ctx context.Context, f drive.File) (io.ReadCloser, error)
	Export(ctx context.Context, f drive.File, mimeType string, tab *drive.Sheet) (io.ReadCloser, error)
	ReaderAt(ctx context.Context, f drive.File) io.ReaderAt
	// Permissions reads a file's sharing, at most MaxPermissionPages
	// pages; Share gives one user a role on it.
	Permissions(ctx context.Context, f drive.File) (drive.Sharing, error)
	Share(ctx context.Context, f drive.File, email, role string) error
}

// Range-read budget for checking one zip's directory before download.
const (
	zipReads    = 8
	zipMaxBytes = 4<<20 + 128<<10
)

type driveAdapter struct{ c *drive.Client }

func (d driveAdapter) Lookup(ctx context.Context, ref drive.Ref) (drive.File, error) {
	return d.c.Lookup(ctx, ref)
}

func (d driveAdapter) SheetTabs(ctx context.Context, f drive.File, needed bool) ([]drive.Sheet, error) {
	if needed {
		return d.c.SheetTabs(ctx, f)
	}
	return d.c.OptionalSheetTabs(ctx, f)
}

func (d driveAdapter) Download(ctx context.Context, f drive.File) (io.ReadCloser, error) {
	return d.c.Download(ctx, f)
}

func (d driveAdapter) Export(ctx context.Context, f drive.File, mimeType string, tab *drive.Sheet) (io.ReadCloser, error) {
	return d.c.Export(ctx, f, mimeType, tab)
}

func (d driveAdapter) Permissions(ctx context.Context, f drive.File) (drive.Sharing, error) {
	return d.c.Permissions(ctx, f, MaxPermissionPages)
}

func (d driveAdapter) Share(ctx context.Context, f drive.File, email, role string) error {
	return d.c.Share(ctx, f, email, role)
}

func (d driveAdapter) ReaderAt(ctx context.Context, f drive.File) io.ReaderAt {
	return budgetedRanges{d.c.RangeReader(ctx, f, zipReads, zipMaxBytes)}
}

// budgetedRanges tells blocked.CheckZip when Drive's Range budget, not
// the archive, ended the reads, so that inner archives past it are left
// to Gmail as CheckZip's own budget leaves them, instead of failing the
// send.
type budgetedRanges struct{ ra io.ReaderAt }

func (b budgetedRanges) ReadAt(p []byte, off int64) (int, error) {
	n, err := b.ra.ReadAt(p, off)
	if errors.Is(err, drive.ErrRangeBudget) {
		err = fmt.Errorf("%w: %w", blocked.ErrReadBudget, err)
	}
	return n, err
}

// logOutcome writes one line per send: sizes, counts and ids, never
// addresses, subjects, bodies or Google's error bodies. A refusal is
// logged by its kind (refusal=too_many_files), never by its sentence,
// with its cause's redacted text when it has one. The "message sent"
// line is the audit record (docs/operations.md): user, recipients count,
// attachment count and bytes, Gmail message id.
func (s *Service) logOutcome(ctx context.Context, acct *account.Account, req Request, opts Options, res Result, err error, took, queued time.Duration) {
	attrs := []any{
		"draft", opts.Draft,
		"recipients", len(req.To) + len(req.Cc) + len(req.Bcc),
		"entries", len(req.Attachments),
		"took_ms", took.Milliseconds(),
		"queued_ms", queued.Milliseconds(),
	}
	if acct.ID() != "" {
		attrs = append(attrs, "user", acct.ID())
	}
	switch {
	case err == nil:
		var attachedBytes int64
		for _, a := range res.Attached {
			attachedBytes += a.Bytes
		}
		shared := 0
		for _, l := range res.Linked {
			shared += len(l.SharedWith)
		}
		attrs = append(attrs, "message_id", res.ID, "thread_id", res.ThreadID, "size_bytes", res.SizeBytes,
			"attached", len(res.Attached), "attached_bytes", attachedBytes, "inline", len(res.Inline), "linked", len(res.Linked), "shared", shared)
		s.cfg.Logger.InfoContext(ctx, "message sent", attrs...)
	case isRefusal(err):
		r, _ := refusal.As(err)
		attrs = append(attrs, "refusal", string(r.Kind))
		if cause := causeText(r.Err); cause != "" {
			attrs = append(attrs, "cause", cause)
		}
		if r.Kind == kindFailedAfterShare {
			s.cfg.Logger.WarnContext(ctx, "send failed", attrs...)
			return
		}
		if forOperator(r.Kind) {
			// Every user meets this until the operator acts.
			s.cfg.Logger.WarnContext(ctx, "send refused", append(attrs, "operator", "the Google Cloud project's Gmail API quota is exhausted: request a higher quota in the Google Cloud console")...)
			return
		}
		s.cfg.Logger.InfoContext(ctx, "send refused", attrs...)
	default:
		attrs = append(attrs, "err", redact.Quoted(err.Error()))
		s.cfg.Logger.WarnContext(ctx, "send failed", attrs...)
	}
}

// logNotConfirmed writes the line of a send its Confirm ended, with the
// send's own attrs: by the refusal's kind (declined, unanswered…), like a
// refusal, never by its sentence.
func (s *Service) logNotConfirmed(ctx context.Context, acct *account.Account, err error, took time.Duration, attrs ...any) {
	attrs = append(attrs, "took_ms", took.Milliseconds())
	if acct.ID() != "" {
		attrs = append(attrs, "user", acct.ID())
	}
	if k := refusal.KindOf(err); k != "" {
		attrs = append(attrs, "refusal", string(k))
	} else {
		attrs = append(attrs, "err", redact.Quoted(err.Error()))
	}
	s.cfg.Logger.InfoContext(ctx, "send not confirmed", attrs...)
}

// causeText describes a refusal's cause for the log. An input error's
// sentence quotes what the caller wrote (an address, a file name), so
// only its field is named.
func causeText(err error) string {
	var ie *mimemsg.InputError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ie) && ie.Field == mimemsg.FieldRecipients:
		return "" // the kind says it all; no one address is at fault
	case errors.As(err, &ie):
		return "invalid " + ie.Field
	}
	return redact.Quoted(err.Error())
}
