// Package blocked knows which files Gmail refuses to send: executables and
// scripts by extension, also inside archives, programs by their content
// whatever their name (a Windows .exe renamed invoice.pdf), and archives
// it cannot scan (password-protected ones). It checks a file name, a
// zip's central directory through an io.ReaderAt (so the caller can back
// it with a few HTTP Range requests instead of a download), and every
// stream (the file's first bytes, and the entries of gzip, tar and zip
// archives) through an io.Writer the caller tees a download into.
//
// Gmail is the final judge: these checks exist so that a message it would
// refuse is refused before any byte is downloaded or sent, with a reason,
// or, for what only the content shows, before the message is finished.
//
// How a caller uses it, by FormatOf(name, mimeType):
//
//	CheckName(name)                              every file, first
//	Zip:             CheckZip(ctx, ra, size, name, Limits{})   before download
//	every file:      in := NewInspector(name, format, Limits{}) (for a zip
//	                 CheckZip has read, with DirectoryChecked()); tee the
//	                 download into in; in.Close() before the message is finished
package blocked

import (
	"path"
	"sort"
	"strings"
)

// extensions are Gmail's blocked file extensions, as Google lists them
// (https://support.google.com/mail/answer/6590), lower case, without dots.
var extensions = map[string]bool{
	"ade": true, "adp": true, "apk": true, "appx": true, "appxbundle": true,
	"bat": true, "cab": true, "chm": true, "cmd": true, "com": true,
	"cpl": true, "diagcab": true, "diagcfg": true, "diagpkg": true,
	"dll": true, "dmg": true, "ex": true, "ex_": true, "exe": true,
	"hta": true, "img": true, "ins": true, "iso": true, "isp": true,
	"jar": true, "jnlp": true, "js": true, "jse": true, "lib": true,
	"lnk": true, "mde": true, "mjs": true, "msc": true, "msi": true,
	"msix": true, "msixbundle": true, "msp": true, "mst": true, "nsh": true,
	"pif": true, "ps1": true, "scr": true, "sct": true, "shb": true,
	"sys": true, "vb": true, "vbe": true, "vbs": true, "vhd": true,
	"vxd": true, "wsc": true, "wsf": true, "wsh": true, "xll": true,
}

// compressors wrap exactly one file whose name is theirs minus the
// extension: "setup.exe.gz" holds setup.exe.
var compressors = map[string]bool{"gz": true, "bz2": true, "xz": true, "z": true, "zst": true, "lz": true, "lzma": true}

// Extensions returns Gmail's blocked extensions, sorted, without dots.
func Extensions() []string {
	out := make([]string, 0, len(extensions))
	for e := range extensions {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

// Ext returns the blocked extension of a file name ("exe"), or ""
// if Gmail would accept the name. Case does not matter, and neither do
// trailing dots and spaces (Windows drops them, so "setup.exe. " runs as
// setup.exe). Only the last extension counts, as in Gmail: "report.pdf.exe"
// is blocked, "setup.exe.pdf" is not; but a single-file compressor's
// extension is looked through: "setup.exe.gz" holds setup.exe.
func Ext(name string) string {
	base := baseName(name)
	for i := 0; i < 4; i++ { // "a.exe.gz.gz" is silly, but bounded
		ext := strings.ToLower(strings.TrimPrefix(path.Ext(base), "."))
		if ext == "" || ext == base {
			return ""
		}
		if extensions[ext] {
			return ext
		}
		if !compressors[ext] {
			return ""
		}
		base = trimEnd(strings.TrimSuffix(base, path.Ext(base)))
	}
	return ""
}

// CheckName returns a *Finding if Gmail would block a file of this name,
// and nil otherwise. It does not look inside archives.
func CheckName(name string) error {
	if ext := Ext(name); ext != "" {
		return &Finding{File: name, Ext: ext, Reason: ReasonExtension}
	}
	return nil
}

// baseName is the last element of a path with either separator, with the
// trailing dots and spaces that Windows ignores removed.
func baseName(name string) string {
	name = trimEnd(name)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return trimEnd(name)
}

// trimEnd drops trailing dots, spaces and other white space.
func trimEnd(s string) string {
	return strings.TrimRight(s, ". \t\r\n\x00")
}
