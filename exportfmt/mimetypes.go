package exportfmt

import (
	"path"
	"slices"
	"strings"
)

// OctetStream is the MIME type of bytes of unknown type.
const OctetStream = "application/octet-stream"

// byExt is a fixed table rather than mime.TypeByExtension, whose answers
// depend on the host's /etc/mime.types: the same name must get the same
// type on every machine.
var byExt = map[string]string{
	// text
	".txt": "text/plain", ".text": "text/plain", ".log": "text/plain",
	".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".md": "text/markdown", ".markdown": "text/markdown",
	".html": "text/html", ".htm": "text/html", ".css": "text/css",
	".xml": "application/xml", ".json": "application/json",
	".yaml": "application/yaml", ".yml": "application/yaml",
	".ics": "text/calendar", ".vcf": "text/vcard", ".rtf": "application/rtf",
	".eml": "message/rfc822",
	// documents
	".pdf":  "application/pdf",
	".doc":  "application/msword",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xls":  "application/vnd.ms-excel",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".ppt":  "application/vnd.ms-powerpoint",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt":  "application/vnd.oasis.opendocument.text",
	".ods":  "application/vnd.oasis.opendocument.spreadsheet",
	".odp":  "application/vnd.oasis.opendocument.presentation",
	".epub": "application/epub+zip",
	// images
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".svg": "image/svg+xml",
	".bmp": "image/bmp", ".tif": "image/tiff", ".tiff": "image/tiff",
	".heic": "image/heic", ".ico": "image/vnd.microsoft.icon",
	// audio and video
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".m4a": "audio/mp4",
	".ogg": "audio/ogg", ".flac": "audio/flac",
	".mp4": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm",
	".avi": "video/x-msvideo", ".mkv": "video/x-matroska",
	// archives
	".zip": "application/zip", ".gz": "application/gzip",
	".tgz": "application/gzip", ".tar": "application/x-tar",
	".bz2": "application/x-bzip2", ".xz": "application/x-xz",
	".7z": "application/x-7z-compressed", ".rar": "application/vnd.rar",
}

// MimeTypeByName returns the MIME type for a file name's extension
// (case-insensitive), or OctetStream when the extension is unknown. It is
// for files the model wrote itself, whose type nobody else tells us.
func MimeTypeByName(name string) string {
	if t, ok := byExt[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return OctetStream
}

// ExtByMimeType returns the usual extension (with its dot) for a MIME type
// in this package's tables, or "" if it has none.
func ExtByMimeType(mimeType string) string {
	t := normType(mimeType)
	if e, ok := preferredExt[t]; ok {
		return e
	}
	return ""
}

// preferredExt inverts byExt: the alphabetically first extension of a
// type, unless a usual one is named here.
var preferredExt = func() map[string]string {
	m := map[string]string{}
	for ext, t := range byExt {
		if cur, ok := m[t]; !ok || ext < cur {
			m[t] = ext
		}
	}
	for t, ext := range map[string]string{
		"text/plain": ".txt", "text/markdown": ".md", "text/html": ".html",
		"image/jpeg": ".jpg", "image/tiff": ".tif", "application/gzip": ".gz",
		"application/yaml": ".yaml",
	} {
		m[t] = ext
	}
	return m
}()

// sameTypes are names Google uses interchangeably for one export format.
var sameTypes = [][]string{
	{"text/markdown", "text/x-markdown"},
	{"application/vnd.oasis.opendocument.spreadsheet", "application/x-vnd.oasis.opendocument.spreadsheet"},
}

// SameMediaType reports whether a response's Content-Type (parameters
// such as charset allowed) is the export format want, or another name
// Google gives that format. An HTML page, a JSON error or any other
// type is not.
func SameMediaType(contentType, want string) bool {
	got, _, _ := strings.Cut(contentType, ";")
	got = strings.ToLower(strings.TrimSpace(got))
	want = strings.ToLower(want)
	if got == want {
		return true
	}
	for _, names := range sameTypes {
		if slices.Contains(names, got) && slices.Contains(names, want) {
			return true
		}
	}
	return false
}
