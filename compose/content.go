package compose

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/drivemail/drivemail/exportfmt"
)

// decodeContent decodes model-written content into its bytes and type.
// name is the attachment's file name, which guesses a missing type; budget
// is what is left of MaxModelBytes, checked before decoding where the
// encoded length allows.
func decodeContent(c Content, name, label string, budget int) ([]byte, string, error) {
	var (
		data     []byte
		mimeType = strings.TrimSpace(c.MimeType)
		err      error
	)
	switch c.Encoding {
	case Text:
		if len(c.Data) > budget {
			return nil, "", tooMuchModelBytes(label)
		}
		if !utf8.ValidString(c.Data) {
			return nil, "", refuse(kindBadText, "%s: text is not valid UTF-8. Send the text as UTF-8, or binary content as base64.", label)
		}
		data = []byte(c.Data)
		if mimeType == "" {
			mimeType = exportfmt.MimeTypeByName(name)
			if mimeType == exportfmt.OctetStream {
				mimeType = "text/plain"
			}
		}
	case Base64:
		data, err = decodeBase64(c.Data, label, budget)
	case DataURI:
		var uriType string
		data, uriType, err = decodeDataURI(c.Data, label, budget)
		if mimeType == "" {
			mimeType = uriType
		}
	default:
		return nil, "", fmt.Errorf("compose: %s has content in no known encoding (%d)", label, c.Encoding)
	}
	if err != nil {
		return nil, "", err
	}
	if mimeType == "" {
		mimeType = exportfmt.MimeTypeByName(name)
	}
	if !validMimeType(mimeType) {
		return nil, "", refuse(kindBadMimeType, "%s: mime_type %q is not a MIME type such as \"text/csv\". Correct it or leave it out.", label, truncate(mimeType, 60))
	}
	if strings.HasPrefix(strings.ToLower(mimeType), "text/") && !strings.Contains(strings.ToLower(mimeType), "charset") && utf8.Valid(data) {
		mimeType += "; charset=utf-8"
	}
	return data, mimeType, nil
}

func tooMuchModelBytes(label string) error {
	return refuse(kindContentTooLarge, "%s: content written into the call is limited to %d MiB per message, summed over all such attachments. "+
		"Put larger files in Google Drive (or use request_upload) and attach them by id.", label, MaxModelBytes>>20)
}

// decodeBase64 accepts standard or URL-safe base64, padded or not, with
// white space (line breaks) anywhere.
func decodeBase64(s, label string, budget int) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	if base64.RawStdEncoding.DecodedLen(len(s)) > budget+2 {
		return nil, tooMuchModelBytes(label)
	}
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	data, err := enc.DecodeString(s)
	if err != nil {
		return nil, refuse(kindBadBase64, "%s: the content is not valid base64. Send the file's bytes base64-encoded, or attach it from Drive by id.", label)
	}
	if len(data) > budget {
		return nil, tooMuchModelBytes(label)
	}
	return data, nil
}

// decodeDataURI reads data:[type][;base64],payload (RFC 2397).
func decodeDataURI(s, label string, budget int) ([]byte, string, error) {
	s = strings.TrimSpace(s)
	if len(s) < len("data:") || !strings.EqualFold(s[:len("data:")], "data:") {
		return nil, "", refuse(kindBadDataURI, "%s: the content is not a data: URI. Use data:TYPE;base64,CONTENT.", label)
	}
	head, payload, ok := strings.Cut(s[len("data:"):], ",")
	if !ok {
		return nil, "", refuse(kindBadDataURI, "%s: the data: URI has no comma before its content. Use data:TYPE;base64,CONTENT.", label)
	}
	params := strings.Split(head, ";")
	mimeType := strings.TrimSpace(params[0])
	isBase64 := false
	for _, p := range params[1:] {
		if strings.EqualFold(strings.TrimSpace(p), "base64") {
			isBase64 = true
		}
	}
	if isBase64 {
		data, err := decodeBase64(payload, label, budget)
		return data, mimeType, err
	}
	if len(payload) > 3*budget {
		return nil, "", tooMuchModelBytes(label)
	}
	text, err := url.PathUnescape(payload)
	if err != nil {
		return nil, "", refuse(kindBadDataURI, "%s: the data: URI's content is not valid percent-encoding. Use data:TYPE;base64,CONTENT.", label)
	}
	if len(text) > budget {
		return nil, "", tooMuchModelBytes(label)
	}
	return []byte(text), mimeType, nil
}

// validMimeType accepts type/subtype with optional parameters, no control
// characters.
func validMimeType(s string) bool {
	if len(s) > 255 {
		return false
	}
	t, _, _ := strings.Cut(s, ";")
	typ, sub, ok := strings.Cut(strings.TrimSpace(t), "/")
	if !ok || typ == "" || sub == "" {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r > 0x7e {
			return false
		}
	}
	return !strings.ContainsAny(typ+sub, " \"(),/:<>?@[\\]{}=")
}

// truncate bounds s to n runes for a sentence.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
