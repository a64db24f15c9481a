package media

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// errTooLarge reports content over the endpoint's MaxSize.
var errTooLarge = errors.New("content exceeds the size limit")

// receiveMedia serves uploadType=media: the body is the content.
func (s *Server) receiveMedia(w http.ResponseWriter, r *http.Request, ep Endpoint, up Upload) {
	up.ContentType = r.Header.Get("Content-Type")
	if up.ContentType == "" {
		up.ContentType = "application/octet-stream"
	}
	if !accepts(ep.Accept, up.ContentType) {
		encode(unsupportedType(up.ContentType, ep.Accept)).write(w)
		return
	}
	if ep.MaxSize > 0 && r.ContentLength > ep.MaxSize {
		encode(tooLarge(ep.MaxSize)).write(w)
		return
	}
	s.deps.Stats.UploadStarted()
	blob, err := s.storeAll(r.Body, ep.MaxSize)
	if err != nil {
		writeStoreError(w, err, ep.MaxSize)
		return
	}
	up.Blob = blob
	s.admitAndFinish(r.Context(), ep, up).write(w)
}

// receiveMultipart serves uploadType=multipart: a multipart/related body
// whose first part is the JSON metadata and second the content.
func (s *Server) receiveMultipart(w http.ResponseWriter, r *http.Request, ep Endpoint, up Upload) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		core.WriteError(w, http.StatusBadRequest, "badRequest",
			"A multipart upload needs Content-Type multipart/related with a boundary.")
		return
	}
	if ep.MaxSize > 0 && r.ContentLength > ep.MaxSize+s.opts.MaxMetadata+64<<10 {
		encode(tooLarge(ep.MaxSize)).write(w)
		return
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	meta, err := mr.NextPart()
	if err != nil {
		core.WriteError(w, http.StatusBadRequest, "badRequest",
			"The multipart body has no metadata part: send the JSON metadata first, then the media.")
		return
	}
	up.Metadata, err = readMetadata(meta, s.opts.MaxMetadata)
	if err != nil {
		core.WriteError(w, http.StatusBadRequest, "badRequest", err.Error())
		return
	}
	part, err := mr.NextPart()
	if err != nil {
		core.WriteError(w, http.StatusBadRequest, "badRequest",
			"The multipart body has no media part: send the content as the second part.")
		return
	}
	up.ContentType = part.Header.Get("Content-Type")
	if up.ContentType == "" {
		up.ContentType = "application/octet-stream"
	}
	if !accepts(ep.Accept, up.ContentType) {
		encode(unsupportedType(up.ContentType, ep.Accept)).write(w)
		return
	}
	var content io.Reader = part
	if strings.EqualFold(strings.TrimSpace(part.Header.Get("Content-Transfer-Encoding")), "base64") {
		// The decoder skips the CR and LF of base64 folded into lines.
		content = base64.NewDecoder(base64.StdEncoding, part)
	}
	s.deps.Stats.UploadStarted()
	blob, err := s.storeAll(content, ep.MaxSize)
	if err != nil {
		writeStoreError(w, err, ep.MaxSize)
		return
	}
	up.Blob = blob
	s.admitAndFinish(r.Context(), ep, up).write(w)
}

// admitAndFinish hands a complete simple upload to the endpoint, unless
// its Admit refuses it now.
func (s *Server) admitAndFinish(ctx context.Context, ep Endpoint, up Upload) answer {
	if res, ok := admit(ctx, ep, up); !ok {
		s.release(up.Blob)
		return encode(res)
	}
	return s.finish(ctx, ep, up)
}

// storeAll copies r into a new blob, refusing more than max bytes (0: no limit).
func (s *Server) storeAll(r io.Reader, max int64) (core.Blob, error) {
	bw, err := s.deps.Blobs.Create()
	if err != nil {
		return core.Blob{}, err
	}
	src := r
	if max > 0 {
		src = io.LimitReader(r, max+1)
	}
	if _, err := io.Copy(bw, src); err != nil {
		bw.Abort()
		return core.Blob{}, fmt.Errorf("read upload body: %w", err)
	}
	if max > 0 && bw.Size() > max {
		bw.Abort()
		return core.Blob{}, errTooLarge
	}
	return bw.Commit()
}

func writeStoreError(w http.ResponseWriter, err error, max int64) {
	if errors.Is(err, errTooLarge) {
		encode(tooLarge(max)).write(w)
		return
	}
	core.WriteError(w, http.StatusBadRequest, "badRequest",
		"The upload body could not be read to its end: send it again.")
}

// readMetadata reads a JSON metadata part or body of at most max bytes;
// an empty body is no metadata.
func readMetadata(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, clientError("The metadata could not be read to its end: send it again.")
	}
	if int64(len(b)) > max {
		return nil, clientError("The metadata is larger than " + itoa(max) + " bytes: send only the resource's fields as JSON.")
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, clientError("Invalid JSON payload received: the metadata must be JSON.")
	}
	return b, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// clientError is a refusal whose text is shown to the client as it is.
type clientError string

func (e clientError) Error() string { return string(e) }
