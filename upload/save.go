package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/exportfmt"
)

// Save is the upload path for bytes that come from elsewhere on the
// server's side (a Gmail attachment, a file a chat client hands over, for
// save_to_drive): the same folder rules, limits, read-ahead and checks as
// /upload, with the source opened only once every check has passed. Its
// refusals are *Error values like the routes' own.

// SaveFile describes the file Save creates.
type SaveFile struct {
	Name     string
	MimeType string // "" guesses it from the name
	// Size is the bytes the source yields, known beforehand (a Gmail
	// attachment's); -1 when unknown. A source that yields other than a
	// known Size saves nothing.
	Size int64
	// FolderID is a folder drivemail may write to; "" is the uploads
	// folder.
	FolderID string
}

// Save streams the source that open gives into a new file of the Drive
// of acct, the caller. Nothing is opened before the
// caller's scope, the size limit, the rate limit and the folder are
// checked; a source that fails or ends early leaves no file, since the
// Drive upload is finalized only at its true end. An error the source
// returns comes back unchanged in the chain, so its own refusal shows.
func (s *Service) Save(ctx context.Context, acct *account.Account, f SaveFile, open func(context.Context) (io.ReadCloser, error)) (Result, error) {
	if strings.TrimSpace(f.Name) == "" {
		return Result{}, refuse(http.StatusBadRequest, kindNoName, "The file needs a name. Give \"name\", such as \"invoice.pdf\".")
	}
	return s.store(ctx, acct, f, func(ctx context.Context, _ *SaveFile) (io.ReadCloser, error) { return open(ctx) })
}

// opener opens a source once store's checks have passed. It may complete
// the file's description with what opening told (a client file's
// headers give its name, type and size) before any byte is read; store
// checks those too.
type opener func(ctx context.Context, f *SaveFile) (io.ReadCloser, error)

// store is Save's path, and SaveClientFile's: it logs the outcome.
func (s *Service) store(ctx context.Context, acct *account.Account, f SaveFile, open opener) (Result, error) {
	start := s.cfg.Now()
	res, err := s.save(ctx, acct, f, open)
	if err != nil {
		level, attrs := slog.LevelInfo, []slog.Attr{slog.String("user", acct.ID())}
		var e *Error
		if errors.As(err, &e) {
			attrs = append(attrs, slog.String("refusal", string(e.Kind)))
			// Drive's answer (status and reason, never its words), for
			// whoever is told of a refusal that keeps coming.
			if de := (*drive.Error)(nil); errors.As(e.Err, &de) {
				attrs = append(attrs, slog.String("cause", de.Error()))
			}
			if e.Operator != "" {
				level, attrs = slog.LevelError, append(attrs, slog.String("operator", e.Operator))
			}
		}
		s.cfg.Logger.LogAttrs(ctx, level, "save refused", attrs...)
		return Result{}, err
	}
	s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "save stored", slog.String("user", acct.ID()), slog.String("file_id", res.FileID),
		slog.Int64("size", res.Size), slog.String("mime_type", res.MimeType), slog.Duration("duration", s.cfg.Now().Sub(start)))
	return res, nil
}

func (s *Service) save(ctx context.Context, acct *account.Account, f SaveFile, open opener) (Result, error) {
	if err := checkScopes(acct); err != nil {
		return Result{}, err
	}
	f.FolderID = strings.TrimSpace(f.FolderID)
	if f.FolderID != "" && !drive.ValidID(f.FolderID) {
		return Result{}, refuse(http.StatusBadRequest, kindBadFolderID, "folder_id %q is not a Drive folder id (ids are letters, digits, '-' and '_'). Leave it out to use the %q folder.",
			truncate(f.FolderID, 60), s.cfg.FolderName)
	}
	if err := s.checkFile(f); err != nil {
		return Result{}, err
	}
	callerCtx := ctx
	ctx, cancel := context.WithTimeout(ctx, s.cfg.MaxDuration)
	defer cancel()
	if err := s.rateLimit(ctx, "upload", acct.ID(), s.cfg.RatePerWindow); err != nil {
		return Result{}, err
	}
	release, err := s.slots.take(acct.ID())
	if err != nil {
		return Result{}, err
	}
	defer release()
	dc, err := s.driveFor(ctx, acct)
	if err != nil {
		return Result{}, err
	}
	folderGiven := f.FolderID != ""
	parent, err := s.uploadFolder(ctx, dc, f.FolderID)
	if err != nil {
		return Result{}, err
	}

	srcCtx, stopSource := context.WithCancel(ctx)
	defer stopSource()
	rc, err := open(srcCtx, &f)
	if err != nil {
		return Result{}, err
	}
	defer rc.Close()
	// What opening told is checked before a byte of the body is read.
	if err := s.checkFile(f); err != nil {
		return Result{}, err
	}
	nf := drive.NewFile{Name: cleanName(f.Name), MimeType: f.MimeType, ParentID: parent, Size: max(f.Size, 0)}
	if nf.MimeType == "" {
		nf.MimeType = exportfmt.MimeTypeByName(nf.Name)
	}
	src := &sourceReader{r: rc, want: f.Size}
	c := newContent(src, s.cfg.MaxBytes, -1, "", nil)
	ahead := newReadAhead(c, s.blocks)
	file, err := dc.Upload(ctx, nf, ahead)
	ahead.close(stopSource)
	switch {
	case err != nil && overTime(callerCtx, ctx):
		return Result{}, s.tookTooLong(err)
	case src.err != nil:
		return Result{}, src.err
	case c.failed != nil:
		return Result{}, c.failed
	case err != nil:
		return Result{}, uploadRefusal(callerCtx, err, folderGiven)
	}
	if err := s.checkStored(ctx, dc, file, c); err != nil {
		return Result{}, err
	}
	return Result{FileID: file.ID, Name: file.Name, MimeType: file.MimeType, Size: c.n, SHA256: c.sum, Handle: s.handle(file.ID)}, nil
}

// checkFile checks what is known of the file: its size (-1, unknown,
// is counted as it streams) and its type ("" is guessed from the name).
func (s *Service) checkFile(f SaveFile) error {
	if f.Size > s.cfg.MaxBytes {
		return refuse(http.StatusRequestEntityTooLarge, kindTooLarge, "The file is %s, over this server's limit of %s for a file put into Drive, so nothing was saved.",
			byteSize(f.Size), byteSize(s.cfg.MaxBytes))
	}
	return checkType(strings.TrimSpace(f.MimeType))
}

// errSourceSize: a source yielded other than the bytes it announced.
var errSourceSize = errors.New("the source's length differs from its announced size")

// sourceReader keeps the source's own failure, which the content counter
// would otherwise word as a client's, and holds it to its announced size.
type sourceReader struct {
	r    io.Reader
	want int64
	n    int64
	err  error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	switch {
	case s.want >= 0 && s.n > s.want, err == io.EOF && s.want >= 0 && s.n != s.want:
		err = fmt.Errorf("%w: %d bytes, announced %d", errSourceSize, s.n, s.want)
	case err == nil || err == io.EOF:
		return n, err
	}
	if s.err == nil {
		s.err = err
	}
	return n, err
}
