package exportfmt

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameBytes bounds a cleaned file name, in bytes of UTF-8, as most file
// systems do.
const MaxNameBytes = 255

// FallbackName is the name of a file whose name cleans to nothing.
const FallbackName = "attachment"

// CleanName makes a file name safe to put in a message and on a
// recipient's disk:
//   - invalid UTF-8 becomes "_"; path separators (/ and \) become "_";
//   - control characters become a space, and invisible format characters
//     (bidirectional overrides such as U+202E, which can disguise
//     "fdp.exe" as "exe.pdf", zero-width joiners, BOMs) are removed;
//   - runs of white space collapse to one space; the name is trimmed of
//     spaces, and of the trailing dots Windows would drop;
//   - it is cut to MaxNameBytes bytes at a character boundary, keeping its
//     extension;
//   - a name that is empty, "." or ".." after all that is FallbackName.
func CleanName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	space := false
	for i, r := range name {
		switch {
		case r == utf8.RuneError && isInvalidAt(name, i):
			r = '_'
		case r == '/' || r == '\\':
			r = '_'
		case unicode.Is(unicode.Cf, r):
			continue
		case unicode.IsControl(r) || unicode.IsSpace(r):
			r = ' '
		}
		if r == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b.WriteRune(r)
	}
	s := trimName(b.String())
	s = trimName(truncateKeepExt(s, MaxNameBytes))
	if s == "" || s == "." || s == ".." {
		return FallbackName
	}
	return s
}

// ExportName is the file name of a native file exported as f: the cleaned
// name with f's extension.
//
// Gmail's own rule is name + extension, and so is ours, with one
// refinement: if the name already ends in f's extension it is kept as is
// ("report.pdf" → "report.pdf"), and if it ends in another extension that
// this table produces, or that Drive's importer keeps on converted Office
// files (.docx, .xlsx, .pptx, .doc, .xls, .ppt, .odt, …), that extension is
// replaced ("report.docx" as pdf → "report.pdf") because a Doc made from
// an uploaded Word file keeps the .docx in its title but is no longer one.
// Any other dot is part of the name: "v1.2 notes" → "v1.2 notes.pdf".
func ExportName(name string, f Format) string {
	s := CleanName(name)
	ext := path.Ext(s)
	switch {
	case strings.EqualFold(ext, f.Ext):
		return s
	case ext != "" && ext != s && replaceableExts[strings.ToLower(ext)]:
		s = strings.TrimSuffix(s, ext)
	}
	return trimName(truncateKeepExt(s+f.Ext, MaxNameBytes))
}

// WithExt returns the cleaned name with ext (".pdf") appended unless it
// already ends in it (case-insensitively). It suits files whose type is
// known but whose name may lack an extension, such as a model-written CSV.
func WithExt(name, ext string) string {
	s := CleanName(name)
	if ext == "" || strings.HasSuffix(strings.ToLower(s), strings.ToLower(ext)) {
		return s
	}
	return trimName(truncateKeepExt(s+ext, MaxNameBytes))
}

// replaceableExts are extensions an exported name may carry from its past
// life as an office file, replaced rather than kept by ExportName.
var replaceableExts = func() map[string]bool {
	m := map[string]bool{
		".doc": true, ".xls": true, ".ppt": true, ".htm": true, ".html": true,
		".gdoc": true, ".gsheet": true, ".gslides": true, ".gdraw": true,
		".jpeg": true, ".tif": true, ".tiff": true, ".gif": true, ".bmp": true,
	}
	for _, fs := range table {
		for _, f := range fs {
			m[f.Ext] = true
		}
	}
	return m
}()

// trimName trims white space and the trailing dots Windows would drop.
func trimName(s string) string {
	s = strings.TrimSpace(s)
	for strings.HasSuffix(s, ".") && s != "." && s != ".." {
		s = strings.TrimRight(strings.TrimSuffix(s, "."), " ")
	}
	return s
}

// truncateKeepExt cuts s to at most max bytes on a character boundary,
// keeping its extension when the extension is short enough to keep.
func truncateKeepExt(s string, max int) string {
	if len(s) <= max {
		return s
	}
	ext := path.Ext(s)
	if len(ext) > 16 || len(ext) == len(s) {
		ext = ""
	}
	stem := s[:len(s)-len(ext)]
	limit := max - len(ext)
	for limit > 0 && !utf8.RuneStart(stem[limit]) {
		limit--
	}
	return strings.TrimRight(stem[:limit], " .") + ext
}

// isInvalidAt reports whether the RuneError at byte i of s comes from
// invalid UTF-8 rather than a literal U+FFFD.
func isInvalidAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 1
}
