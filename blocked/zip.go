package blocked

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Zip record signatures and sizes (APPNOTE.TXT 4.3).
const (
	sigDirEnd       = 0x06054b50
	sigDir64End     = 0x06064b50
	sigDir64Locator = 0x07064b50
	sigDirHeader    = 0x02014b50
	sigLocalHeader  = 0x04034b50

	dirEndLen       = 22
	dir64LocatorLen = 20
	dir64EndLen     = 56
	dirHeaderLen    = 46
	localHeaderLen  = 30
	maxCommentLen   = 0xFFFF

	// tailLen covers the end-of-central-directory record with the longest
	// comment, plus the zip64 locator and the fixed zip64 record that
	// usually precede it: one read finds them all.
	tailLen = dirEndLen + maxCommentLen + dir64LocatorLen + dir64EndLen

	// dirChunk is the size of each read of a directory that is not
	// already in the tail.
	dirChunk = 1 << 20

	flagEncrypted       = 0x0001
	flagStrongEncrypted = 0x0040
	flagUTF8            = 0x0800
	flagMaskedDirectory = 0x2000

	methodStored = 0

	// minNestedReads is the read budget a nested zip needs at least: its
	// local header, its tail, and one directory read.
	minNestedReads = 3

	extraZip64       = 0x0001
	extraUnicodePath = 0x7075
	extraAES         = 0x9901
)

// CheckZip checks a zip archive of the given size through ra without
// downloading it: it reads the end of the file (one read of at most
// 64 KiB + 98 bytes, which finds the end-of-directory record, and the
// zip64 records when present) and then the central directory (in the tail
// already for small archives, otherwise in reads of at most 1 MiB), and
// checks every entry's name, including the Unicode name some tools store
// beside it, which an extractor may show instead.
//
// It returns a *Finding for a blocked entry, a password-protected entry,
// a directory that cannot be parsed, or one over lim; an error from ra or
// ctx is returned wrapped, and is not a Finding.
//
// Nested archives: an entry whose name is blocked (inner.exe, setup.exe.gz,
// tools.jar) is refused by name. An inner .zip that is stored without
// compression is checked the same way, at its offset, within the same read
// budget (at most lim.MaxNested of them, one level deep); a compressed
// inner archive is not opened, because that would mean downloading and
// inflating it: Gmail, which scans deeper, stays the final judge of those,
// and its refusal at send time sends nothing.
//
// Not covered: entries present only as local headers and missing from the
// central directory; the directory is what extractors list.
func CheckZip(ctx context.Context, ra io.ReaderAt, size int64, name string, lim Limits) error {
	lim = lim.withDefaults()
	z := &zipCheck{ctx: ctx, ra: &budgetReaderAt{ra: ra, left: lim.MaxReads}, lim: lim, file: name}
	err := z.check(z.ra, size, nil, 0)
	if errors.Is(err, ErrReadBudget) {
		if z.ra.left > 0 { // the ReaderAt's own budget ran out
			return z.tooLarge(nil, "needs more reading than allowed")
		}
		return z.tooLarge(nil, fmt.Sprintf("needs more than %d reads", lim.MaxReads))
	}
	return err
}

type zipCheck struct {
	ctx    context.Context
	ra     *budgetReaderAt
	lim    Limits
	file   string
	nested int
}

// ErrReadBudget ends the reads of a CheckZip past Limits.MaxReads. A
// ReaderAt with a budget of its own (a few Range requests, say) returns an
// error wrapping it when that budget runs out, and CheckZip treats it the
// same: inner archives it can no longer afford are left to Gmail, and an
// archive whose own directory it cannot afford is refused as too large.
var ErrReadBudget = errors.New("read budget exhausted")

// budgetReaderAt counts ReadAt calls and refuses past a budget.
type budgetReaderAt struct {
	ra   io.ReaderAt
	left int
}

func (b *budgetReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if b.left <= 0 {
		return 0, ErrReadBudget
	}
	b.left--
	return b.ra.ReadAt(p, off)
}

// directory locates a central directory.
type directory struct {
	offset  int64 // where it starts in the archive
	size    int64
	entries uint64 // as the end record says
}

// check checks the zip held in ra[0:size]; outer is the path of archives
// around it (empty at the top).
func (z *zipCheck) check(ra io.ReaderAt, size int64, outer []string, depth int) error {
	if err := z.ctx.Err(); err != nil {
		return err
	}
	if size < dirEndLen {
		return z.unreadable(outer, "too short to be a zip")
	}
	n := min(size, int64(tailLen))
	tail := make([]byte, n)
	if err := readFullAt(ra, tail, size-n); err != nil {
		return z.readErr(outer, err)
	}
	dir, err := findDirectory(tail, size)
	if err != nil {
		return z.unreadable(outer, err.Error())
	}
	if dir.size > z.lim.MaxDirBytes {
		return z.tooLarge(outer, fmt.Sprintf("a %d-byte directory; the limit is %d", dir.size, z.lim.MaxDirBytes))
	}
	if dir.entries > uint64(z.lim.MaxEntries) {
		return z.tooLarge(outer, fmt.Sprintf("%d entries; the limit is %d", dir.entries, z.lim.MaxEntries))
	}

	var r *bufio.Reader
	if tailStart := size - n; dir.offset >= tailStart {
		r = bufio.NewReader(bytes.NewReader(tail[dir.offset-tailStart : dir.offset-tailStart+dir.size]))
	} else {
		r = bufio.NewReaderSize(io.NewSectionReader(ra, dir.offset, dir.size), int(min(dir.size, dirChunk)))
	}
	tail = nil

	var stored []entry
	count := 0
	for ; ; count++ {
		if err := z.ctx.Err(); err != nil {
			return err
		}
		e, err := readEntry(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			if isFormatErr(err) {
				return z.unreadable(outer, err.Error())
			}
			return z.readErr(outer, err)
		}
		if count >= z.lim.MaxEntries {
			return z.tooLarge(outer, fmt.Sprintf("more than %d entries", z.lim.MaxEntries))
		}
		if err := z.checkEntry(e, outer); err != nil {
			return err
		}
		if depth == 0 && e.method == methodStored && FormatOf(e.name, "") == Zip && e.compSize > 0 {
			stored = append(stored, e)
		}
	}
	// Fewer records than the end record promises: the directory is not
	// where it says, or is damaged, and what is missing was not checked.
	if uint64(count) < dir.entries {
		return z.unreadable(outer, fmt.Sprintf("the directory lists %d of its %d entries", count, dir.entries))
	}
	// Nested archives are a bonus within what is left of the read budget:
	// one that cannot be afforded is left to Gmail, like compressed ones.
	for _, e := range stored {
		if z.nested >= z.lim.MaxNested || z.ra.left < minNestedReads {
			break
		}
		z.nested++
		err := z.checkNested(ra, size, e, outer, depth)
		if errors.Is(err, ErrReadBudget) {
			break
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkEntry applies the name and encryption rules to one entry.
func (z *zipCheck) checkEntry(e entry, outer []string) error {
	for _, n := range e.names() {
		if ext := Ext(n); ext != "" {
			return &Finding{File: z.file, Entry: entryPath(append(outer, n)...), Ext: ext, Reason: ReasonExtension}
		}
	}
	if e.encrypted {
		return &Finding{File: z.file, Entry: entryPath(append(outer, e.name)...), Reason: ReasonEncrypted}
	}
	return nil
}

// checkNested checks a stored inner zip in place: one read of its local
// header to find where its bytes start, then the same check.
func (z *zipCheck) checkNested(ra io.ReaderAt, size int64, e entry, outer []string, depth int) error {
	inner := append(append([]string(nil), outer...), e.name)
	var lh [localHeaderLen]byte
	if e.offset < 0 || e.offset+localHeaderLen > size {
		return z.unreadable(inner, "entry offset outside the archive")
	}
	if err := readFullAt(ra, lh[:], e.offset); err != nil {
		return z.readErr(inner, err)
	}
	if binary.LittleEndian.Uint32(lh[0:]) != sigLocalHeader {
		return z.unreadable(inner, "bad local header")
	}
	start := e.offset + localHeaderLen + int64(binary.LittleEndian.Uint16(lh[26:])) + int64(binary.LittleEndian.Uint16(lh[28:]))
	if start > size || e.compSize > uint64(size-start) {
		return z.unreadable(inner, "entry data outside the archive")
	}
	return z.check(io.NewSectionReader(ra, start, int64(e.compSize)), int64(e.compSize), inner, depth+1)
}

func (z *zipCheck) unreadable(outer []string, detail string) error {
	return &Finding{File: z.file, Entry: entryPath(outer...), Reason: ReasonUnreadable, Detail: detail}
}

func (z *zipCheck) tooLarge(outer []string, detail string) error {
	return &Finding{File: z.file, Entry: entryPath(outer...), Reason: ReasonTooLarge, Detail: detail}
}

// readErr wraps an error of the underlying reader; ErrReadBudget stays
// visible to errors.Is for the callers up the stack.
func (z *zipCheck) readErr(outer []string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return z.unreadable(outer, "truncated")
	}
	return fmt.Errorf("checking zip %q: %w", z.file, err)
}

// readFullAt fills p from ra at off; io.EOF with a full p is success.
func readFullAt(ra io.ReaderAt, p []byte, off int64) error {
	n, err := ra.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// formatError is a structural problem in the directory.
type formatError string

func (e formatError) Error() string { return string(e) }

func isFormatErr(err error) bool {
	var fe formatError
	return errors.As(err, &fe)
}

// findDirectory finds the end-of-central-directory record (the last one
// whose comment length fits) in tail, the last bytes of an archive of the
// given size, and the zip64 record if the archive needs one.
func findDirectory(tail []byte, size int64) (directory, error) {
	tailStart := size - int64(len(tail))
	i := len(tail) - dirEndLen
	for ; i >= 0; i-- {
		if binary.LittleEndian.Uint32(tail[i:]) == sigDirEnd &&
			i+dirEndLen+int(binary.LittleEndian.Uint16(tail[i+20:])) <= len(tail) {
			break
		}
	}
	if i < 0 {
		return directory{}, formatError("no end-of-directory record")
	}
	rec := tail[i:]
	d := directory{
		entries: uint64(binary.LittleEndian.Uint16(rec[10:])),
		size:    int64(binary.LittleEndian.Uint32(rec[12:])),
		offset:  int64(binary.LittleEndian.Uint32(rec[16:])),
	}
	end := tailStart + int64(i) // the directory ends where its records start

	if l := i - dir64LocatorLen; l >= 0 && binary.LittleEndian.Uint32(tail[l:]) == sigDir64Locator {
		off := int64(binary.LittleEndian.Uint64(tail[l+8:]))
		rel := off - tailStart
		if off < 0 || rel < 0 || rel+dir64EndLen > int64(l) {
			return directory{}, formatError("zip64 record outside the end of the file")
		}
		r := tail[rel:]
		if binary.LittleEndian.Uint32(r) != sigDir64End {
			return directory{}, formatError("bad zip64 record")
		}
		d.entries = binary.LittleEndian.Uint64(r[32:])
		size64 := binary.LittleEndian.Uint64(r[40:])
		off64 := binary.LittleEndian.Uint64(r[48:])
		if size64 > 1<<62 || off64 > 1<<62 {
			return directory{}, formatError("zip64 sizes out of range")
		}
		d.size, d.offset = int64(size64), int64(off64)
		end = off
	}

	// The directory sits right before its end records. If the recorded
	// offset disagrees, the archive has bytes prepended (a self-extractor,
	// a polyglot): trust the position, as unzip does.
	if d.size > end {
		return directory{}, formatError("directory larger than the file")
	}
	if d.offset+d.size != end {
		d.offset = end - d.size
	}
	return d, nil
}

// entry is what a check needs of one central directory record.
type entry struct {
	name        string
	unicodeName string // from the Info-ZIP Unicode Path extra field
	method      uint16
	encrypted   bool
	compSize    uint64
	offset      int64
}

// names are the names an extractor might show for the entry.
func (e entry) names() []string {
	if e.unicodeName != "" && e.unicodeName != e.name {
		return []string{e.name, e.unicodeName}
	}
	return []string{e.name}
}

// readEntry reads one central directory record; io.EOF at a clean end.
func readEntry(r *bufio.Reader) (entry, error) {
	var h [dirHeaderLen]byte
	if _, err := io.ReadFull(r, h[:4]); err != nil {
		if err == io.EOF {
			return entry{}, io.EOF
		}
		return entry{}, formatError("directory ends inside a record")
	}
	sig := binary.LittleEndian.Uint32(h[:])
	if sig != sigDirHeader {
		// Digital signature and other trailing records end the listing.
		return entry{}, io.EOF
	}
	if _, err := io.ReadFull(r, h[4:]); err != nil {
		return entry{}, wrapShort(err)
	}
	flags := binary.LittleEndian.Uint16(h[8:])
	e := entry{
		method:    binary.LittleEndian.Uint16(h[10:]),
		encrypted: flags&(flagEncrypted|flagStrongEncrypted|flagMaskedDirectory) != 0,
		compSize:  uint64(binary.LittleEndian.Uint32(h[20:])),
		offset:    int64(binary.LittleEndian.Uint32(h[42:])),
	}
	uncomp := uint64(binary.LittleEndian.Uint32(h[24:]))
	nameLen := int(binary.LittleEndian.Uint16(h[28:]))
	extraLen := int(binary.LittleEndian.Uint16(h[30:]))
	commentLen := int(binary.LittleEndian.Uint16(h[32:]))

	buf := make([]byte, nameLen+extraLen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return entry{}, wrapShort(err)
	}
	if _, err := r.Discard(commentLen); err != nil {
		return entry{}, wrapShort(err)
	}
	e.name = decodeName(buf[:nameLen], flags&flagUTF8 != 0)
	parseExtra(&e, buf[nameLen:], uncomp == 0xFFFFFFFF)
	return e, nil
}

func wrapShort(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return formatError("directory ends inside a record")
	}
	return err
}

// parseExtra reads the extra fields that matter: zip64 sizes and offset,
// the Unicode path, and AES encryption.
func parseExtra(e *entry, extra []byte, uncompSaturated bool) {
	for len(extra) >= 4 {
		id := binary.LittleEndian.Uint16(extra)
		n := int(binary.LittleEndian.Uint16(extra[2:]))
		extra = extra[4:]
		if n > len(extra) {
			return
		}
		field := extra[:n]
		extra = extra[n:]
		switch id {
		case extraZip64:
			// Only the saturated fields are present, in this order.
			if uncompSaturated && len(field) >= 8 {
				field = field[8:]
			}
			if e.compSize == 0xFFFFFFFF && len(field) >= 8 {
				e.compSize = binary.LittleEndian.Uint64(field)
				field = field[8:]
			}
			if e.offset == 0xFFFFFFFF && len(field) >= 8 {
				e.offset = int64(binary.LittleEndian.Uint64(field))
			}
		case extraUnicodePath:
			if len(field) >= 5 && field[0] == 1 {
				e.unicodeName = decodeName(field[5:], true)
			}
		case extraAES:
			e.encrypted = true
		}
	}
}

// decodeName turns a stored name into a string for checking and showing:
// UTF-8 when flagged or valid, otherwise each byte as its Latin-1 rune
// (the extension, which is what matters, is ASCII either way).
func decodeName(b []byte, utf bool) string {
	if utf || utf8.Valid(b) {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(rs)
}
