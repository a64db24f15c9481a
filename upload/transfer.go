package upload

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/exportfmt"
)

// receive runs one upload: the checks that need no body, admission, the
// request up to the file, the ticket's bindings, then the stream into
// Drive. It returns the result or the refusal to answer with.
func (s *Service) receive(w http.ResponseWriter, r *http.Request, p permit) (_ Result, err error) {
	if err := s.checkLength(r, p); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.MaxDuration)
	defer cancel()
	if err := s.rateLimit(ctx, "upload", p.acct.ID(), s.cfg.RatePerWindow); err != nil {
		return Result{}, err
	}
	release, err := s.slots.take(p.acct.ID())
	if err != nil {
		return Result{}, err
	}
	defer release()

	rc := http.NewResponseController(w)
	// A server-wide write timeout would cut a long upload's answer; the
	// read side is paced instead, and MaxDuration caps the whole.
	_ = rc.SetWriteDeadline(time.Time{})
	b := newBudget(r.Body, fieldsBudget)
	body := newPaced(b, rc, s.cfg.IdleTimeout, s.cfg.MinBytes)
	q, err := readRequest(r, body, b, s.cfg.MaxBytes)
	if err != nil {
		return Result{}, err
	}
	nf, err := s.newFile(q, p)
	if err != nil {
		return Result{}, err
	}
	if p.ticket {
		if err := s.useTicket(ctx, p); err != nil {
			return Result{}, err
		}
		// From here a failure cannot be retried with the same URL, but
		// for a file past the size limit, which Drive never stored.
		defer func() { err = s.afterTicket(ctx, p, err) }()
	}
	dc, err := s.driveFor(ctx, p.acct)
	if err != nil {
		return Result{}, err
	}
	// Checked before the body is read, so a folder drivemail may not
	// write to fails at once, with a sentence that says why.
	folderGiven := nf.ParentID != ""
	if nf.ParentID, err = s.uploadFolder(ctx, dc, nf.ParentID); err != nil {
		return Result{}, err
	}
	file := bufio.NewReaderSize(q.file, 64<<10)
	if nf.MimeType == "" {
		nf.MimeType = sniff(file)
	}
	c := newContent(file, s.cfg.MaxBytes, p.size, p.sha256, q.atEnd)
	ahead := newReadAhead(c, s.blocks)
	f, err := dc.Upload(ctx, nf, ahead)
	// Asked before close, which cuts a read under way: c then holds that
	// as the client's failure, and net/http cancels the request's context.
	over := err != nil && overTime(r.Context(), ctx)
	// After close, the read-ahead goroutine is gone and c is ours again.
	ahead.close(func() { _ = rc.SetReadDeadline(time.Now()) })
	switch {
	case over:
		return Result{}, s.tookTooLong(err)
	case c.failed != nil:
		return Result{}, c.failed
	case err != nil:
		return Result{}, uploadRefusal(r.Context(), err, folderGiven)
	}
	if err := s.checkStored(ctx, dc, f, c); err != nil {
		return Result{}, err
	}
	if err := s.completeTransfer(ctx, p, f.ID); err != nil {
		return Result{}, err
	}
	return Result{FileID: f.ID, Name: f.Name, MimeType: f.MimeType, Size: c.n, SHA256: c.sum, Handle: s.handle(f.ID)}, nil
}

// uploadFolder checks that files can go into the folder given, or finds
// (or makes) the uploads folder when none is.
func (s *Service) uploadFolder(ctx context.Context, dc driveAPI, given string) (string, error) {
	if given != "" {
		if err := dc.CheckUploadFolder(ctx, given); err != nil {
			return "", googleRefusal(err, true)
		}
		return given, nil
	}
	id, err := dc.FolderInRoot(ctx, s.cfg.FolderName)
	if err != nil {
		return "", googleRefusal(err, false)
	}
	return id, nil
}

// afterTicket settles a spent ticket whose upload failed. A file that
// passed the size limit as it streamed was stopped by drivemail before
// its end, so Drive finalized nothing: its ticket is given back, and the
// same URL takes a smaller file, as it does when the length announced is
// past the limit (checkLength). Any other failure leaves it spent: Drive
// may have stored the file, or the bytes were not the ones declared.
func (s *Service) afterTicket(ctx context.Context, p permit, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Kind == kindTooLarge {
		relErr := s.cfg.Limits.ReleaseOnce(ctx, ticketKey(p))
		if relErr == nil {
			return err
		}
		s.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "upload: could not give back the ticket of a file past the limit",
			slog.String("user", p.acct.ID()), slog.String("error", relErr.Error()))
	}
	return spentTicket(err)
}

// spentTicket tells the caller of a failed ticket upload that the URL is
// used up, unless the refusal already sends them to request_upload: "try
// again" with the same URL would only meet "already used".
func spentTicket(err error) error {
	var e *Error
	if !errors.As(err, &e) || strings.Contains(e.Text, "request_upload") {
		return err
	}
	r := *e.Refusal
	r.Text += " This upload URL is now used up: ask request_upload for a new one to try again."
	again := *e
	again.Refusal = &r
	return &again
}

// checkLength refuses, before reading anything, a body whose announced
// length is past the limit or, for a raw body, differs from the size a
// ticket declared. The ticket is not spent, so a corrected retry works.
func (s *Service) checkLength(r *http.Request, p permit) error {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	form := strings.HasPrefix(mt, "multipart/")
	limit := s.cfg.MaxBytes
	if form {
		limit += fieldsBudget + trailerBudget // the form's own framing
	}
	if p.size > s.cfg.MaxBytes || r.ContentLength > limit {
		return tooLarge(s.cfg.MaxBytes)
	}
	if !form && p.size >= 0 && r.ContentLength >= 0 && r.ContentLength != p.size {
		return refuse(http.StatusUnprocessableEntity, kindSizeMismatch, "The request body has %d bytes, not the %d declared to request_upload; nothing was saved. Check you are sending the right file (this URL still works once).", r.ContentLength, p.size)
	}
	return nil
}

// newFile decides the Drive file's name, type and folder from the request
// and the ticket, enforcing what the ticket fixed.
func (s *Service) newFile(q *request, p permit) (drive.NewFile, error) {
	nf := drive.NewFile{ID: p.fileID}
	if p.ticket {
		for _, n := range q.names {
			if n != p.name {
				return nf, refuse(http.StatusForbidden, kindNameMismatch, "This upload URL was issued for a file named %q, not %q; nothing was saved. Upload it under the name it was issued for, or ask request_upload for a URL for %q.", p.name, n, n)
			}
		}
		if q.token != "" && q.token != p.token {
			return nf, refuse(http.StatusForbidden, kindTokenMismatch, "The form's token field is not this upload URL's ticket; nothing was saved. Send the fields the transfer descriptor gives, unchanged.")
		}
		if q.folderID != "" && q.folderID != p.folderID {
			return nf, refuse(http.StatusForbidden, kindFolderMismatch, "This upload URL fixes the folder the file goes to; leave folder_id out, or ask request_upload for a URL with that folder_id.")
		}
		nf.Name, nf.ParentID, nf.MimeType = p.name, p.folderID, p.mimeType
	} else {
		nf.Name, nf.ParentID = q.name(), q.folderID
		if nf.Name == "" {
			return nf, refuse(http.StatusBadRequest, kindNoName, "The file has no name. Send it as a form file (curl -F file=@report.pdf), or add ?name=report.pdf to the URL.")
		}
	}
	if nf.ParentID != "" && !drive.ValidID(nf.ParentID) {
		return nf, refuse(http.StatusBadRequest, kindBadFolderID, "folder_id %q is not a Drive folder id (ids are letters, digits, '-' and '_'). Leave it out to use the %q folder.", truncate(nf.ParentID, 60), s.cfg.FolderName)
	}
	if nf.MimeType == "" {
		nf.MimeType = q.mimeType
	}
	if nf.MimeType == "" {
		if t := exportfmt.MimeTypeByName(nf.Name); t != exportfmt.OctetStream {
			nf.MimeType = t
		}
	}
	if err := checkType(nf.MimeType); err != nil {
		return nf, err
	}
	return nf, nil
}

// checkType refuses Google's own types: Drive would convert the bytes
// into a Doc or Sheet instead of keeping the file as sent.
func checkType(mt string) error {
	if strings.HasPrefix(mt, "application/vnd.google-apps.") {
		return refuse(http.StatusUnsupportedMediaType, kindGoogleType, "%q is a Google Docs type; uploads keep the file as it is. Send the file's own type (such as application/pdf), or none.", mt)
	}
	return nil
}

// sniff guesses the type from the first bytes when nothing else said it.
// A read error here shows up again on the next read, where it is handled.
func sniff(r *bufio.Reader) string {
	head, _ := r.Peek(sniffLen)
	if len(head) == 0 {
		return exportfmt.OctetStream
	}
	mt, _, err := mime.ParseMediaType(http.DetectContentType(head))
	if err != nil {
		return exportfmt.OctetStream
	}
	return mt
}

// driveFor returns the user's Drive client; a lost grant is a refusal.
func (s *Service) driveFor(ctx context.Context, acct *account.Account) (driveAPI, error) {
	dc, err := s.driveOf(ctx, acct)
	if err != nil {
		return nil, googleRefusal(err, false)
	}
	return dc, nil
}

// uploadRefusal explains a Drive upload that failed for a reason other
// than the content or MaxDuration (see overTime): the client went away,
// or Drive refused.
func uploadRefusal(reqCtx context.Context, err error, folderGiven bool) error {
	if reqCtx.Err() != nil {
		return readRefusal(reqCtx.Err())
	}
	return googleRefusal(err, folderGiven)
}

// overTime reports whether ctx, the upload's, reached MaxDuration while
// the caller's reqCtx was still live. It is asked before anything else
// of an upload that failed: stopping at the deadline fails the reads of
// the client or the source under way too, as if they had failed.
func overTime(reqCtx, ctx context.Context) bool {
	return reqCtx.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// tookTooLong is the refusal of an upload stopped at MaxDuration.
func (s *Service) tookTooLong(err error) *Error {
	return refuse(http.StatusRequestTimeout, kindTookTooLong, "The upload took longer than %s, so nothing was saved. Send a smaller file or use a faster connection.", spell(s.cfg.MaxDuration)).because(err)
}

// checkStored compares what Drive says it stored with what was sent. A
// file that does not match is deleted: a wrong file must not stand.
func (s *Service) checkStored(ctx context.Context, dc driveAPI, f drive.File, c *content) error {
	sizeOK := f.Size == c.n || (f.Size == 0 && f.SHA256 == "")
	if sizeOK && (f.SHA256 == "" || strings.EqualFold(f.SHA256, c.sum)) {
		return nil
	}
	if err := dc.DeleteFile(ctx, f.ID); err != nil {
		s.cfg.Logger.ErrorContext(ctx, "upload: could not delete a file Drive stored wrongly", "file_id", f.ID, "error", err)
		// The file stands, so the user must remove it.
		return refuse(http.StatusBadGateway, kindDriveMismatch, "Google Drive stored something other than the bytes sent, and drivemail could not remove that file: delete %q from your Drive, then try the upload again.", f.Name)
	}
	return refuse(http.StatusBadGateway, kindDriveMismatch, "Google Drive stored something other than the bytes sent, so the file was removed. Try the upload again.")
}
