package drive

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/drivemail/drivemail/exportfmt"
)

// Query is a search over the user's Drive as drive_search takes it.
type Query struct {
	// Text is free text matched against names and contents; empty lists
	// recent files.
	Text string
	// MimeType, when set, keeps files of exactly this type.
	MimeType string
	// Type, when set, keeps files of the kind a word names, as
	// exportfmt.TypeQuery knows them (pdf, document, spreadsheet, image,
	// folder…; families such as image/* included).
	Type string
	// ModifiedAfter, when not zero, keeps files modified after it.
	ModifiedAfter time.Time
	// PageSize is 1 to MaxPageSize; 0 means DefaultPageSize.
	PageSize int
	// PageToken continues a previous search.
	PageToken string
}

// Search limits.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	maxTextLen      = 1000
	maxMimeLen      = 255
	maxPageTokenLen = 4096
)

// Query validation errors; their text is fit to show the model.
var (
	ErrQueryText     = errors.New("the search text has a control character or is longer than 1000 characters; send plain words")
	ErrQueryMimeType = errors.New(`mime_type must be a MIME type such as "application/pdf"`)
	ErrQueryPageSize = fmt.Errorf("page_size must be between 1 and %d", MaxPageSize)
	ErrQueryToken    = errors.New("page_token is not one this server returned; start the search again without it")
	ErrQueryType     = errors.New("the type is not one drive_search knows; use " + strings.Join(exportfmt.TypeWords(), ", ") + ", or a MIME type")
)

// Q builds Drive's q expression for the query:
//
//	(name contains 'x' or fullText contains 'x') and mimeType = '…' and
//	modifiedTime > '…' and trashed = false
//
// with ' and \ escaped inside every literal, so no text can change the
// expression's shape.
func (q Query) Q() (string, error) {
	if err := q.validate(); err != nil {
		return "", err
	}
	var terms []string
	if t := strings.TrimSpace(q.Text); t != "" {
		lit := quote(t)
		terms = append(terms, "(name contains "+lit+" or fullText contains "+lit+")")
	}
	if q.MimeType != "" {
		terms = append(terms, "mimeType = "+quote(q.MimeType))
	}
	if q.Type != "" {
		// The fragment is built from exportfmt's constants only.
		frag, ok := exportfmt.TypeQuery(q.Type)
		if !ok {
			return "", ErrQueryType
		}
		terms = append(terms, frag)
	}
	if !q.ModifiedAfter.IsZero() {
		terms = append(terms, "modifiedTime > "+quote(q.ModifiedAfter.UTC().Format(time.RFC3339)))
	}
	terms = append(terms, "trashed = false")
	return strings.Join(terms, " and "), nil
}

func (q Query) validate() error {
	if len(q.Text) > maxTextLen {
		return ErrQueryText
	}
	for _, r := range q.Text {
		if unicode.IsControl(r) && r != '\t' || r == unicode.ReplacementChar {
			return ErrQueryText
		}
	}
	if q.MimeType != "" && !validMimeType(q.MimeType) {
		return ErrQueryMimeType
	}
	if q.PageSize < 0 || q.PageSize > MaxPageSize {
		return ErrQueryPageSize
	}
	if len(q.PageToken) > maxPageTokenLen || strings.ContainsFunc(q.PageToken, unicode.IsControl) {
		return ErrQueryToken
	}
	return nil
}

// quote writes s as a Drive query string literal.
func quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for _, r := range s {
		if r == '\'' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
	return b.String()
}

// validMimeType accepts type/subtype made of RFC 6838 name characters.
func validMimeType(s string) bool {
	if len(s) > maxMimeLen {
		return false
	}
	typ, sub, ok := strings.Cut(s, "/")
	return ok && mimeName(typ) && mimeName(sub)
}

func mimeName(s string) bool {
	if s == "" || len(s) > 127 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$&-^_.+", c) >= 0:
		default:
			return false
		}
	}
	return true
}
