package blocked

import (
	"bytes"
	"encoding/binary"
	"io"
)

// Gmail refuses some files by what they are, not only by their name: a
// program renamed invoice.pdf does not get through. The sniffer below
// looks at a file's bytes as they stream past, for the signatures of the
// programs and blocked types that carry one where it can be read without
// doubt:
//
//   - a Windows program (PE: .exe, .dll, .sys, .scr…): "MZ", and at the
//     offset its DOS header gives (e_lfanew, at 0x3C) the signature
//     "PE\0\0". "MZ" alone is not enough: text may begin with it, and a
//     text file's bytes at 0x3C are printable, which puts e_lfanew past
//     half a gigabyte and its signature where no NUL-free text has one;
//   - a Linux or other Unix program (ELF): "\x7fELF", a class and a byte
//     order of 1 or 2, version 1, and the type of an executable or a
//     shared object (not an object file or a core dump);
//   - a macOS program (Mach-O): one of the four magics (32- and 64-bit,
//     either byte order) with the file type of code that runs or loads
//     (an executable, a library, a bundle), or a universal
//     binary (0xCAFEBABE, 0xCAFEBABF) listing 1 to 19 architectures, a
//     count a Java class file (which starts with 0xCAFEBABE too) never
//     has there, its version being 45 or more;
//   - a Windows cabinet (.cab): "MSCF" and four zero bytes;
//   - a Windows shortcut (.lnk): its header size (0x4C) and CLSID.
//
// Not sniffed: scripts (text, which no signature tells from prose),
// installers and disk images whose signature is shared with documents
// (.msi is an OLE file, as a .doc is) or sits at the end (.dmg, .vhd).
// Their names are still checked.

// headLen is how much of a file's start the sniffer keeps: the DOS
// header (64 bytes) is the longest it reads there.
const headLen = 64

// sniffer decides, from the bytes of one file as they pass, whether the
// file is one of the types above. It holds headLen bytes and, while a
// PE signature is awaited further on, four more.
type sniffer struct {
	head  [headLen]byte
	n     int   // bytes of head held
	off   int64 // bytes seen in all
	peAt  int64 // where "PE\0\0" must stand; -1 when not awaited
	pe    [4]byte
	peN   int
	found string // what the file is, once known
	done  bool   // decided
}

func newSniffer() *sniffer { return &sniffer{peAt: -1} }

// write takes the next bytes of the file and returns what it is once
// that is known, "" until then and for a file that is none of them.
func (s *sniffer) write(p []byte) string {
	if s.done {
		return s.found
	}
	start := s.off
	s.off += int64(len(p))
	if s.n < headLen {
		s.n += copy(s.head[s.n:], p)
		if s.n < headLen {
			return ""
		}
		s.decide(s.head[:])
		if s.done {
			return s.found
		}
	}
	// The PE signature, past the head: the part of it in p.
	lo, hi := max(start, s.peAt+int64(s.peN)), min(s.off, s.peAt+4)
	if lo < hi {
		s.peN += copy(s.pe[s.peN:], p[lo-start:hi-start])
	}
	if s.peN == 4 {
		s.done = true
		if s.pe == [4]byte{'P', 'E', 0, 0} {
			s.found = programPE
		}
	}
	return s.found
}

// end is the end of the file: a file shorter than the head is decided
// on what there is; a PE signature never reached means no PE.
func (s *sniffer) end() string {
	if !s.done && s.n < headLen {
		s.decide(s.head[:s.n])
	}
	s.done = true
	return s.found
}

// What the sniffer finds, for a sentence: "… is <this> by its content".
const (
	programPE    = "a Windows program (an .exe or .dll)"
	programELF   = "a Linux or Unix program (ELF)"
	programMachO = "a macOS program (Mach-O)"
	typeCab      = "a Windows cabinet archive (.cab)"
	typeLnk      = "a Windows shortcut (.lnk)"
)

// lnkHeader is a shell link's header size and CLSID
// 00021401-0000-0000-C000-000000000046, as stored.
var lnkHeader = []byte{0x4c, 0, 0, 0, 0x01, 0x14, 0x02, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0x46}

// decide reads the head (all of it, or a whole file shorter than it).
// It sets found, or peAt to await a PE signature further on, or done.
func (s *sniffer) decide(h []byte) {
	s.done = true
	switch {
	case isELF(h):
		s.found = programELF
	case isMachO(h):
		s.found = programMachO
	case len(h) >= 8 && bytes.Equal(h[:8], []byte("MSCF\x00\x00\x00\x00")):
		s.found = typeCab
	case bytes.HasPrefix(h, lnkHeader):
		s.found = typeLnk
	case len(h) == headLen && h[0] == 'M' && h[1] == 'Z':
		at := int64(binary.LittleEndian.Uint32(h[0x3C:]))
		switch {
		case at+4 <= 0x3C: // before e_lfanew itself
			if bytes.Equal(h[at:at+4], []byte("PE\x00\x00")) {
				s.found = programPE
			}
		case at >= headLen:
			s.peAt, s.done = at, false
		}
	}
}

func isELF(h []byte) bool {
	if len(h) < 18 || !bytes.HasPrefix(h, []byte("\x7fELF")) || h[6] != 1 {
		return false
	}
	var order binary.ByteOrder
	switch h[5] {
	case 1:
		order = binary.LittleEndian
	case 2:
		order = binary.BigEndian
	default:
		return false
	}
	typ := order.Uint16(h[16:])
	return (h[4] == 1 || h[4] == 2) && (typ == 2 || typ == 3) // ET_EXEC, ET_DYN
}

// machOCode are the Mach-O file types that run or load as code: an
// executable, a dynamic library, the dynamic linker, a bundle, a kernel
// extension (not an object file, a core dump or debug symbols).
var machOCode = map[uint32]bool{2: true, 6: true, 7: true, 8: true, 11: true}

func isMachO(h []byte) bool {
	if len(h) < 16 {
		return false
	}
	switch binary.BigEndian.Uint32(h) {
	case 0xFEEDFACE, 0xFEEDFACF:
		return machOCode[binary.BigEndian.Uint32(h[12:])]
	case 0xCEFAEDFE, 0xCFFAEDFE:
		return machOCode[binary.LittleEndian.Uint32(h[12:])]
	case 0xCAFEBABE, 0xCAFEBABF: // universal: big-endian, an architecture count
		n := binary.BigEndian.Uint32(h[4:])
		return n >= 1 && n < 20
	}
	return false
}

// sniffStream reads r until its type is known or it ends, and returns
// what it is ("" for none of the types above). It stops reading as soon
// as it knows, so the caller may discard the rest without looking.
func sniffStream(r io.Reader, buf []byte) (string, error) {
	s := newSniffer()
	for !s.done {
		n, err := r.Read(buf)
		if n > 0 {
			if what := s.write(buf[:n]); what != "" {
				return what, nil
			}
		}
		if err == io.EOF {
			return s.end(), nil
		}
		if err != nil {
			return "", err
		}
	}
	return s.found, nil
}
