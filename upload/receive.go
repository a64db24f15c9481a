package upload

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/drivemail/drivemail/exportfmt"
	"github.com/drivemail/drivemail/internal/stream"
)

// Budgets for the parts of a request around the file's bytes.
const (
	// fieldsBudget caps everything a multipart body sends before the file
	// part: the name and folder_id fields with their part headers.
	fieldsBudget = 64 << 10
	// trailerBudget caps what may follow the file part: its closing
	// boundary (anything more is refused).
	trailerBudget = 16 << 10
	maxFieldBytes = 1024
	// maxPartsBeforeFile bounds the fields read before the file part.
	maxPartsBeforeFile = 4
	// sniffLen is how much of the content sniffing looks at.
	sniffLen = 512
)

// request is one upload request, read up to the first byte of the file.
type request struct {
	// names holds every name the request gives for the file, cleaned, in
	// order of precedence: the name query parameter, the name field, the
	// file part's filename (or the raw body's Content-Disposition).
	names    []string
	mimeType string // declared by the request; "" when absent or generic
	folderID string // from the query or the folder_id field
	token    string // the token field of a form (file-transfer descriptors)
	file     io.Reader
	// atEnd checks what follows the file in the body.
	atEnd func() error
}

// name is the file name the request asks for, "" if it gives none.
func (q *request) name() string {
	if len(q.names) == 0 {
		return ""
	}
	return q.names[0]
}

// readRequest parses r (whose body is body, with b the budget under it)
// up to the file's first byte. A multipart/form-data body carries one file
// part, after optional name and folder_id fields; any other body is the
// file itself.
func readRequest(r *http.Request, body io.Reader, b *stream.Limited, maxFile int64) (*request, error) {
	q := &request{}
	query := r.URL.Query()
	if err := q.addQuery(query); err != nil {
		return nil, err
	}
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType == "multipart/form-data" {
		if r.Method != http.MethodPost {
			return nil, refuse(http.StatusMethodNotAllowed, kindFormNotPost, "A multipart form upload must be a POST. Use POST with -F file=@NAME, or PUT the raw file with -T NAME.")
		}
		if err := q.readForm(body, params["boundary"], b, maxFile); err != nil {
			return nil, err
		}
		return q, nil
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		return nil, refuse(http.StatusUnsupportedMediaType, kindNotFormData, "A multipart upload must be multipart/form-data (curl -F file=@NAME). To send the raw file, use curl -T NAME or --data-binary @NAME.")
	}
	b.Extend(maxFile + 1) // the file, one byte past the limit, so the limit is what trips
	if cd := r.Header.Get("Content-Disposition"); cd != "" {
		if _, p, err := mime.ParseMediaType(cd); err == nil && p["filename"] != "" {
			q.names = append(q.names, cleanName(p["filename"]))
		}
	}
	q.mimeType = declaredType(r.Header.Get("Content-Type"))
	q.file = body
	return q, nil
}

func (q *request) addQuery(query url.Values) error {
	for key, vals := range query {
		switch key {
		case "name", "folder_id":
			if len(vals) != 1 {
				return refuse(http.StatusBadRequest, kindRepeatedQuery, "The query parameter %q is given %d times; give it once.", key, len(vals))
			}
		default:
			return refuse(http.StatusBadRequest, kindUnknownQuery, "Unknown query parameter %q. /upload takes only name and folder_id.", truncate(key, 40))
		}
	}
	if v := query.Get("name"); v != "" {
		q.names = append(q.names, cleanName(v))
	}
	q.folderID = strings.TrimSpace(query.Get("folder_id"))
	return nil
}

// readForm reads the fields before the file part and stops at its first
// byte.
func (q *request) readForm(body io.Reader, boundary string, b *stream.Limited, maxFile int64) error {
	if boundary == "" {
		return refuse(http.StatusBadRequest, kindFormMalformed, "The multipart form has no boundary in its Content-Type. Let curl build the form: curl -F file=@NAME URL.")
	}
	mr := multipart.NewReader(body, boundary)
	var fieldName, fieldFolder, fieldToken string
	for parts := 0; ; parts++ {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return refuse(http.StatusBadRequest, kindNoFilePart, "The form has no file part. Send the file as -F file=@NAME.")
		}
		if err != nil {
			return formRefusal(err)
		}
		if isFilePart(p) {
			if fieldName != "" {
				q.names = append(q.names, fieldName)
			}
			if fn := partFileName(p); fn != "" {
				q.names = append(q.names, cleanName(fn))
			}
			if q.folderID == "" {
				q.folderID = fieldFolder
			} else if fieldFolder != "" && fieldFolder != q.folderID {
				return refuse(http.StatusBadRequest, kindRepeatedFolderID, "folder_id is given twice with different values (query and form); give it once.")
			}
			q.token = fieldToken
			q.mimeType = declaredType(p.Header.Get("Content-Type"))
			b.Extend(maxFile + 1 + trailerBudget)
			q.file = p
			q.atEnd = func() error { return afterFile(mr) }
			return nil
		}
		if parts >= maxPartsBeforeFile {
			return refuse(http.StatusBadRequest, kindTooManyFields, "The form has too many fields before the file. Send only the file part and, if needed, name and folder_id fields.")
		}
		switch p.FormName() {
		case "name", "folder_id", "token":
		default:
			return refuse(http.StatusBadRequest, kindUnknownField, "Unknown form field %q. /upload takes a file part (-F file=@NAME) and optional name and folder_id fields.", truncate(p.FormName(), 40))
		}
		limit := maxFieldBytes
		if p.FormName() == "token" {
			limit = maxTicketLen
		}
		v, err := readField(p, limit)
		if err != nil {
			return err
		}
		switch p.FormName() {
		case "name":
			if fieldName != "" {
				return refuse(http.StatusBadRequest, kindRepeatedName, "The name field is given twice; give it once.")
			}
			fieldName = cleanName(v)
		case "token":
			fieldToken = strings.TrimSpace(v)
		default:
			fieldFolder = strings.TrimSpace(v)
		}
	}
}

// isFilePart: the part named "file", or any part carrying a filename.
func isFilePart(p *multipart.Part) bool {
	return p.FormName() == "file" || partFileName(p) != ""
}

// partFileName is the filename parameter as sent. multipart's FileName
// strips only "/" paths; cleanName handles "\" as well.
func partFileName(p *multipart.Part) string {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return ""
	}
	return params["filename"]
}

func readField(p *multipart.Part, limit int) (string, error) {
	v, err := io.ReadAll(io.LimitReader(p, int64(limit)+1))
	if err != nil {
		return "", formRefusal(err)
	}
	if len(v) > limit {
		return "", refuse(http.StatusBadRequest, kindLongField, "The %s field is longer than %d bytes. Give a file name or a folder id.", p.FormName(), limit)
	}
	if !utf8.Valid(v) {
		return "", refuse(http.StatusBadRequest, kindFieldNotUTF8, "The %s field is not UTF-8 text.", p.FormName())
	}
	return string(v), nil
}

// afterFile accepts only the end of the form after the file part. Fields
// that come after the file cannot change an upload already on its way.
func afterFile(mr *multipart.Reader) error {
	p, err := mr.NextRawPart()
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return formRefusal(err)
	}
	switch {
	case isFilePart(p):
		return refuse(http.StatusBadRequest, kindTwoFiles, "The form has more than one file; nothing was saved. Upload one file per request.")
	case p.FormName() == "name" || p.FormName() == "folder_id":
		return refuse(http.StatusBadRequest, kindFieldAfterFile, "The %s field comes after the file; nothing was saved. Put name and folder_id before the file part (curl: -F name=… before -F file=@…), or give them in the query string (?name=…&folder_id=…).", p.FormName())
	}
	return refuse(http.StatusBadRequest, kindUnknownField, "Unknown form field %q after the file; nothing was saved. /upload takes one file part and optional name and folder_id fields before it.", truncate(p.FormName(), 40))
}

// formRefusal explains a multipart body that could not be read: a read
// that failed (cut off, too slow, too large) or a form that is malformed.
func formRefusal(err error) *Error {
	var ne net.Error
	var mbe *http.MaxBytesError
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, errBudget) || errors.As(err, &ne) || errors.As(err, &mbe) {
		return readRefusal(err)
	}
	return refuse(http.StatusBadRequest, kindFormMalformed, "The multipart form is malformed. Let curl build it: curl -F file=@NAME URL.").because(errMalformedForm)
}

// errMalformedForm stands in the log for mime/multipart's parse error,
// whose text can quote a line of the body (of the file, perhaps).
var errMalformedForm = errors.New("multipart form does not parse")

// cleanName keeps the last path segment of a name (either slash) and
// cleans it for Drive and for mail (see exportfmt.CleanName).
func cleanName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		s = s[i+1:]
	}
	return exportfmt.CleanName(s)
}

// declaredType is a request's Content-Type as a file type, or "" when it
// says nothing about the file: absent, unparsable, or one of the generic
// types curl and browsers send by default.
func declaredType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ""
	}
	switch mt {
	case "", exportfmt.OctetStream, "application/x-www-form-urlencoded", "multipart/form-data":
		return ""
	}
	return mt
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
