// Package upload serves drivemail's upload endpoint (docs/reference.md): a file
// from the user's disk streams into their Google Drive and its id comes
// back, so a file that was never in Drive can still be attached by id.
//
//   - POST /upload, behind the bearer check (the server hands Direct the
//     caller's account): a multipart/form-data body with one file part,
//     or the raw file as the body.
//   - PUT or POST /upload/<ticket>: the same without a bearer token, with
//     a short-lived single-use ticket from the request_upload tool.
//
// The body streams through a byte counter and SHA-256 into a Drive
// resumable files.create: no temporary file; per upload, one Drive chunk
// and a read-ahead of the client's next bytes (readahead.go).
// Anything wrong with the bytes (too large, not what the ticket declared,
// cut off) fails the stream before its end, so the Drive client never
// sends the final chunk and no file is created.
package upload

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/handle"
)

// Defaults for Config.
const (
	DefaultMaxBytes      = 1 << 30
	DefaultTicketTTL     = 15 * time.Minute
	DefaultFolderName    = "drivemail uploads"
	DefaultRatePerWindow = 30
	DefaultRateWindow    = 10 * time.Minute
	DefaultMaxPerUser    = 4
	DefaultMaxConcurrent = 16
	DefaultIdleTimeout   = 30 * time.Second
	DefaultMinBytes      = 32 << 10
	DefaultMaxDuration   = 2 * time.Hour
)

// Config configures the upload service. BaseURL, Secrets, Accounts and
// Limits are required; zero values elsewhere take the defaults above.
type Config struct {
	// BaseURL is the server's public origin: tickets are BASE/upload/…
	// and handles mcp-file://<its host>/<file id>.
	BaseURL *url.URL
	// Secrets are the --secret keys: the first signs tickets, all verify.
	Secrets [][]byte
	// Accounts opens the account of a ticket's user, whom only the
	// ticket names; a direct upload, and every tool, is handed the
	// caller's account by the server.
	Accounts *account.Door
	Limits   Limits
	// Files fetches the files a chat client hands over by URL, for
	// SaveClientFile; nil offers none.
	Files *clientfile.Fetcher
	// Transfers keeps file-transfer URIs (the MCP draft); nil offers none.
	Transfers Transfers
	// TransferTTL is how long a file-transfer URI can be used.
	TransferTTL time.Duration
	// MaxBytes is the largest file accepted.
	MaxBytes int64
	// TicketTTL is how long a request_upload URL stays valid.
	TicketTTL time.Duration
	// FolderName is the folder in My Drive that uploads go to when the
	// request names none.
	FolderName string
	// RatePerWindow uploads (and twice as many tickets) per user in each
	// RateWindow, counted in the store so replicas share the count.
	RatePerWindow int
	RateWindow    time.Duration
	// MaxPerUser and MaxConcurrent bound the uploads running at once on
	// this replica, per user and in all. Each holds about 8 MiB (a Drive
	// chunk and the read-ahead), so MaxConcurrent bounds their memory.
	MaxPerUser    int
	MaxConcurrent int
	// IdleTimeout and MinBytes set the slowest client accepted: each
	// IdleTimeout must bring MinBytes. MaxDuration caps one upload.
	IdleTimeout time.Duration
	MinBytes    int64
	MaxDuration time.Duration
	Logger      *slog.Logger
	Now         func() time.Time
}

// Service serves the upload routes and issues tickets. It is safe for
// concurrent use.
type Service struct {
	cfg     Config
	signer  *signer
	slots   *slots
	blocks  *blocks
	driveOf func(ctx context.Context, acct *account.Account) (driveAPI, error)
}

// driveAPI is the part of *drive.Client uploads use.
type driveAPI interface {
	Upload(ctx context.Context, nf drive.NewFile, r io.Reader) (drive.File, error)
	GenerateID(ctx context.Context) (string, error)
	DeleteFile(ctx context.Context, id string) error
	FolderInRoot(ctx context.Context, name string) (string, error)
	CheckUploadFolder(ctx context.Context, id string) error
}

// New checks cfg, fills in defaults and returns the service.
func New(cfg Config) (*Service, error) {
	if cfg.BaseURL == nil || cfg.BaseURL.Host == "" {
		return nil, errors.New("upload: a base URL with a host is required")
	}
	if cfg.Accounts == nil || cfg.Limits == nil {
		return nil, errors.New("upload: a door to the users' accounts and a store for limits are required")
	}
	sg, err := newSigner(cfg.Secrets)
	if err != nil {
		return nil, err
	}
	setDefaults(&cfg)
	s := &Service{cfg: cfg, signer: sg, slots: newSlots(cfg.MaxPerUser, cfg.MaxConcurrent), blocks: newBlocks(2 * aheadBlocks)}
	s.driveOf = func(ctx context.Context, acct *account.Account) (driveAPI, error) { return acct.Drive(ctx) }
	return s, nil
}

func setDefaults(cfg *Config) {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MinBytes <= 0 {
		cfg.MinBytes = DefaultMinBytes
	}
	if cfg.FolderName == "" {
		cfg.FolderName = DefaultFolderName
	}
	def(&cfg.RatePerWindow, DefaultRatePerWindow)
	def(&cfg.MaxPerUser, DefaultMaxPerUser)
	def(&cfg.MaxConcurrent, DefaultMaxConcurrent)
	defDur(&cfg.TicketTTL, DefaultTicketTTL)
	defDur(&cfg.TransferTTL, DefaultTransferTTL)
	defDur(&cfg.RateWindow, DefaultRateWindow)
	defDur(&cfg.IdleTimeout, DefaultIdleTimeout)
	defDur(&cfg.MaxDuration, DefaultMaxDuration)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
}

// Result is the 201 answer of an upload (docs/reference.md's table of it is
// made from this type).
type Result struct {
	FileID   string `json:"file_id"`
	Name     string `json:"name"`
	MimeType string `json:"mime_type"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
	Handle   string `json:"handle"`
}

// permit is what one upload request may do: whose Drive it writes, and
// what a ticket fixed. A direct upload fixes nothing but the user.
type permit struct {
	acct     *account.Account
	ticket   bool
	name     string
	mimeType string
	size     int64 // -1: not declared
	sha256   string
	folderID string
	fileID   string
	// nonce and expires identify the ticket, spent when the upload starts.
	nonce   string
	expires time.Time
	// token is the ticket as sent: a form's token field must repeat it.
	token string
	// transfer is the id of the file-transfer URI the upload completes.
	transfer string
}

// Direct serves POST /upload for acct, the caller the bearer check let
// in; nil, no one signed in, is refused.
func (s *Service) Direct(w http.ResponseWriter, r *http.Request, acct *account.Account) {
	if acct == nil {
		s.fail(w, r, "", refuse(http.StatusUnauthorized, kindNotSignedIn, "Sign in first: send Authorization: Bearer <access token>, or use a URL from request_upload."))
		return
	}
	if err := checkScopes(acct); err != nil {
		s.fail(w, r, acct.ID(), err)
		return
	}
	s.serve(w, r, permit{acct: acct, size: -1})
}

// Ticket serves PUT and POST /upload/{ticket}; the ticket is the only
// credential.
func (s *Service) Ticket() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.signer.verify(r.PathValue("ticket"), s.cfg.Now())
		switch {
		case errors.Is(err, errTicketExpired):
			s.fail(w, r, c.User, refuse(http.StatusGone, kindTicketExpired, "This upload URL expired at %s. Ask request_upload for a new one.",
				time.Unix(c.Expires, 0).UTC().Format("15:04:05 UTC")).because(err))
			return
		case err != nil:
			s.fail(w, r, "", refuse(http.StatusForbidden, kindTicketInvalid, "This upload URL is not valid: it was changed, cut short, or issued by another server. Ask request_upload for a new one.").because(err))
			return
		}
		// The ticket vouches for its user, whose scopes were checked
		// when it was issued: the account knows their id alone.
		acct := s.cfg.Accounts.OpenID(c.User)
		p := permit{acct: acct, ticket: true, name: c.Name, mimeType: c.MimeType, size: -1,
			sha256: c.SHA256, folderID: c.Folder, fileID: c.FileID, nonce: c.Nonce, expires: time.Unix(c.Expires, 0),
			token: r.PathValue("ticket"), transfer: c.Transfer}
		if c.Size != nil {
			p.size = *c.Size
		}
		s.serve(w, r, p)
	})
}

// serve runs one upload and answers it.
func (s *Service) serve(w http.ResponseWriter, r *http.Request, p permit) {
	start := s.cfg.Now()
	res, err := s.receive(w, r, p)
	if err != nil {
		s.fail(w, r, p.acct.ID(), err)
		return
	}
	s.cfg.Logger.LogAttrs(r.Context(), slog.LevelInfo, "upload stored",
		slog.String("user", p.acct.ID()), slog.String("file_id", res.FileID), slog.Int64("size", res.Size),
		slog.String("mime_type", res.MimeType), slog.Bool("ticket", p.ticket),
		slog.Duration("duration", s.cfg.Now().Sub(start)))
	writeJSON(w, http.StatusCreated, res)
}

// fail logs a failed upload and answers it. A refusal is logged by its
// kind and cause, never its sentence, which may quote a file name; no
// token, body or Google error text is logged either (drive errors carry
// none). The connection is closed, since the rest of a refused body is
// not worth reading.
func (s *Service) fail(w http.ResponseWriter, r *http.Request, userID string, err error) {
	var e *Error
	level := slog.LevelWarn
	if !errors.As(err, &e) || e.Status >= 500 || e.Operator != "" {
		level = slog.LevelError
	}
	attrs := []slog.Attr{slog.String("user", userID)}
	if e != nil {
		attrs = append(attrs, slog.Int("status", e.Status), slog.String("refusal", string(e.Kind)))
		if e.Operator != "" {
			attrs = append(attrs, slog.String("operator", e.Operator))
		}
		if e.Err != nil {
			attrs = append(attrs, slog.String("cause", e.Err.Error()))
		}
	} else {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	s.cfg.Logger.LogAttrs(r.Context(), level, "upload refused", attrs...)
	w.Header().Set("Connection", "close")
	writeError(w, err)
}

func checkScopes(acct *account.Account) error {
	if acct.MayAddFiles() {
		return nil
	}
	return refuse(http.StatusForbidden, kindNoDriveScope, "drivemail may not add files to your Drive: the Google sign-in did not grant it. Reconnect drivemail (sign in again) and allow it to add files to your Drive.")
}

// handle is the mcp-file:// name of an uploaded file.
func (s *Service) handle(fileID string) string {
	return handle.Upload{Host: s.cfg.BaseURL.Host, File: drive.Ref{ID: fileID}}.String()
}

// uploadURL is where a ticket is used.
func (s *Service) uploadURL(ticket string) string {
	return strings.TrimSuffix(s.cfg.BaseURL.String(), "/") + "/upload/" + ticket
}
