package render

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// CheckPDF verifies what a PDF reader relies on in a file this package
// wrote: the header, a cross-reference table whose every offset points at
// its object, a trailer whose startxref points at the table, and a page
// tree. It returns the page count and the text of every literal string
// shown with Tj, one per line (octal escapes decoded as Latin-1).
func CheckPDF(b []byte) (pages int, text string, err error) {
	if !bytes.HasPrefix(b, []byte("%PDF-1.")) {
		return 0, "", errors.New("pdf: no %PDF- header")
	}
	if !bytes.HasSuffix(bytes.TrimRight(b, "\r\n"), []byte("%%EOF")) {
		return 0, "", errors.New("pdf: no %%EOF at the end")
	}
	i := bytes.LastIndex(b, []byte("startxref"))
	if i < 0 {
		return 0, "", errors.New("pdf: no startxref")
	}
	fields := strings.Fields(string(b[i+len("startxref"):]))
	if len(fields) == 0 {
		return 0, "", errors.New("pdf: startxref without an offset")
	}
	xrefAt, err := strconv.Atoi(fields[0])
	if err != nil {
		return 0, "", fmt.Errorf("pdf: startxref: %w", err)
	}
	if xrefAt <= 0 || xrefAt >= len(b) || !bytes.HasPrefix(b[xrefAt:], []byte("xref\n")) {
		return 0, "", fmt.Errorf("pdf: startxref %d does not point at an xref table", xrefAt)
	}
	lines := strings.Split(string(b[xrefAt:]), "\n")
	var first, count int
	if _, err := fmt.Sscanf(lines[1], "%d %d", &first, &count); err != nil || first != 0 {
		return 0, "", fmt.Errorf("pdf: xref subsection header %q", lines[1])
	}
	if len(lines) < 2+count {
		return 0, "", errors.New("pdf: xref table shorter than its count")
	}
	for n := 1; n < count; n++ {
		entry := lines[2+n]
		if len(entry) != 19 || !strings.HasSuffix(entry, " n ") {
			return 0, "", fmt.Errorf("pdf: xref entry %d malformed: %q", n, entry)
		}
		off, err := strconv.Atoi(entry[:10])
		if err != nil || off >= len(b) {
			return 0, "", fmt.Errorf("pdf: xref entry %d offset %q", n, entry[:10])
		}
		want := fmt.Sprintf("%d 0 obj", n)
		if !bytes.HasPrefix(b[off:], []byte(want)) {
			return 0, "", fmt.Errorf("pdf: xref entry %d points at %q, not %q", n, clip(b[off:], 20), want)
		}
	}
	trailer := string(b[xrefAt:])
	if !strings.Contains(trailer, fmt.Sprintf("/Size %d", count)) || !strings.Contains(trailer, "/Root ") {
		return 0, "", errors.New("pdf: trailer lacks /Size or /Root")
	}
	m := regexp.MustCompile(`/Type /Pages /Kids \[[^\]]*\] /Count (\d+)`).FindSubmatch(b)
	if m == nil {
		return 0, "", errors.New("pdf: no page tree")
	}
	pages, _ = strconv.Atoi(string(m[1]))
	if got := bytes.Count(b, []byte("/Type /Page ")); got != pages {
		return 0, "", fmt.Errorf("pdf: page tree counts %d pages, file has %d", pages, got)
	}
	return pages, ExtractPDFText(b), nil
}

var tjString = regexp.MustCompile(`\(((?:[^()\\]|\\.|\\[0-7]{1,3})*)\) Tj`)

// ExtractPDFText returns the literal strings a PDF shows with Tj, one per
// line. It reads uncompressed content streams only (as this package and
// simple PDF writers produce).
func ExtractPDFText(b []byte) string {
	var out strings.Builder
	for _, m := range tjString.FindAllSubmatch(b, -1) {
		s := m[1]
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c != '\\' || i+1 >= len(s) {
				out.WriteRune(rune(c))
				continue
			}
			i++
			switch {
			case s[i] >= '0' && s[i] <= '7':
				j := i
				for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
					j++
				}
				v, _ := strconv.ParseUint(string(s[i:j]), 8, 8)
				out.WriteRune(rune(v))
				i = j - 1
			case s[i] == 'n':
				out.WriteByte('\n')
			default:
				out.WriteByte(s[i])
			}
		}
		out.WriteByte('\n')
	}
	return out.String()
}

func clip(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// CheckZip opens b as a zip archive and checks that every .xml, .rels,
// .opf and .xhtml entry is well-formed XML; when mime is not empty the
// first entry must be an uncompressed "mimetype" holding exactly mime with
// no extra field (the OpenDocument and EPUB rule). It returns the entry
// names in order and the text of all XML character data joined by spaces.
func CheckZip(b []byte, mime string) (names []string, text string, err error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, "", fmt.Errorf("zip: %w", err)
	}
	var all strings.Builder
	for i, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			return nil, "", fmt.Errorf("zip entry %s: %w", f.Name, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, "", fmt.Errorf("zip entry %s: %w", f.Name, err)
		}
		if i == 0 && mime != "" {
			if f.Name != "mimetype" || f.Method != zip.Store || len(f.Extra) != 0 || string(data) != mime {
				return nil, "", fmt.Errorf("zip: first entry %q (method %d, %d extra bytes) is not a stored mimetype %q", f.Name, f.Method, len(f.Extra), mime)
			}
		}
		switch {
		case strings.HasSuffix(f.Name, ".xml"), strings.HasSuffix(f.Name, ".rels"), strings.HasSuffix(f.Name, ".opf"), strings.HasSuffix(f.Name, ".xhtml"):
			t, err := xmlCharData(data)
			if err != nil {
				return nil, "", fmt.Errorf("zip entry %s: %w", f.Name, err)
			}
			all.WriteString(t)
		case strings.HasSuffix(f.Name, ".html"):
			all.Write(data)
			all.WriteByte(' ')
		}
	}
	if mime != "" && len(names) == 0 {
		return nil, "", errors.New("zip: empty archive")
	}
	return names, all.String(), nil
}

func xmlCharData(data []byte) (string, error) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	var b strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return "", fmt.Errorf("xml: %w", err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			b.Write(cd)
			b.WriteByte(' ')
		}
	}
}
