package blocked

import "strings"

// Format is the archive format of a file, which decides how it is checked.
type Format int

const (
	// NotArchive: CheckName is all there is to check.
	NotArchive Format = iota
	// Zip: CheckZip reads its central directory before any download.
	Zip
	// Gzip: a single compressed file; NewInspector reads its header (and,
	// if the header names a .tar, the tar inside) while it streams.
	Gzip
	// Tar: NewInspector reads its entry headers while it streams.
	Tar
	// TarGzip: .tgz / .tar.gz; NewInspector inflates and reads the tar.
	TarGzip
)

func (k Format) String() string {
	switch k {
	case Zip:
		return "zip"
	case Gzip:
		return "gzip"
	case Tar:
		return "tar"
	case TarGzip:
		return "tar.gz"
	default:
		return "none"
	}
}

// FormatOf says what archive format a file has, from its name and, when the
// name has no telling extension, its MIME type. Office documents (.docx,
// .xlsx, .odt, .epub…) are zips inside, but Gmail does not treat them as
// archives, and neither does this. Blocked archive types such as .jar and
// .apk never get here: CheckName refuses them first.
func FormatOf(name, mimeType string) Format {
	lower := strings.ToLower(baseName(name))
	switch {
	case strings.HasSuffix(lower, ".tar.gz"), strings.HasSuffix(lower, ".tgz"):
		return TarGzip
	case strings.HasSuffix(lower, ".zip"):
		return Zip
	case strings.HasSuffix(lower, ".gz"):
		return Gzip
	case strings.HasSuffix(lower, ".tar"):
		return Tar
	}
	return formatOfMime(mimeType)
}

func formatOfMime(mimeType string) Format {
	t, _, _ := strings.Cut(strings.ToLower(mimeType), ";")
	switch strings.TrimSpace(t) {
	case "application/zip", "application/x-zip-compressed", "application/x-zip":
		return Zip
	case "application/gzip", "application/x-gzip":
		return Gzip
	case "application/x-tar", "application/x-gtar":
		return Tar
	case "application/x-compressed-tar", "application/x-gtar-compressed":
		return TarGzip
	}
	return NotArchive
}

// Limits bound the work of checking one archive. Zero fields take the
// defaults below.
type Limits struct {
	// MaxEntries is the most entries an archive may list (default 65 535).
	MaxEntries int
	// MaxDirBytes is the largest zip central directory read (default 8 MiB).
	MaxDirBytes int64
	// MaxReads is the most ReadAt calls for one zip, nested ones included
	// (default 16).
	MaxReads int
	// MaxInflated is how many decompressed bytes of a gzip stream are
	// examined (default 1 GiB); a tar.gz that inflates past it is refused
	// as too large to check, a plain .gz simply stops being read.
	MaxInflated int64
	// MaxNested is how many stored archives inside a zip are opened (default 4);
	// see CheckZip.
	MaxNested int
}

// Defaults of Limits.
const (
	DefaultMaxEntries  = 65535
	DefaultMaxDirBytes = 8 << 20
	DefaultMaxReads    = 16
	DefaultMaxInflated = 1 << 30
	DefaultMaxNested   = 4
)

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxDirBytes <= 0 {
		l.MaxDirBytes = DefaultMaxDirBytes
	}
	if l.MaxReads <= 0 {
		l.MaxReads = DefaultMaxReads
	}
	if l.MaxInflated <= 0 {
		l.MaxInflated = DefaultMaxInflated
	}
	if l.MaxNested <= 0 {
		l.MaxNested = DefaultMaxNested
	}
	return l
}
