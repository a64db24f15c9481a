package compose_test

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/clientfile/clientfiletest"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

// Programs by their headers, padded to size: what a renamed executable
// looks like to drivemail.
func peProgram(size int) []byte {
	b := make([]byte, size)
	copy(b, "MZ\x90\x00")
	binary.LittleEndian.PutUint32(b[0x3C:], 0x80)
	copy(b[0x80:], "PE\x00\x00\x64\x86")
	return b
}

func elfProgram(size int) []byte {
	b := make([]byte, size)
	copy(b, "\x7fELF\x02\x01\x01")
	binary.LittleEndian.PutUint16(b[16:], 3) // a position-independent executable
	return b
}

func machOProgram(size int) []byte {
	b := make([]byte, size)
	binary.LittleEndian.PutUint32(b, 0xFEEDFACF)
	binary.LittleEndian.PutUint32(b[12:], 2) // MH_EXECUTE
	return b
}

// mzText is a text file that starts with "MZ", as some do.
var mzText = []byte(strings.Repeat("MZ: the Mozambique office's figures for May, by region and by month.\n", 3000))

func zipHolding(t *testing.T, name string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range []struct {
		name string
		data []byte
	}{{"readme.txt", bytes.Repeat([]byte("read me\n"), 10_000)}, {name, data}} {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(f.data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func driveAttachment(f drivesvc.File) compose.Attachment {
	return compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}
}

// TestRenamedProgramsRefused: a program under a name Gmail allows is
// refused by its content, from Drive, as a client's file, from Gmail,
// inside a zip and inside a tar.gz, and written into the call, with what was found and what to do, before Gmail
// has the whole message: nothing is sent. A PDF and a text file that
// starts with "MZ" go.
func TestRenamedProgramsRefused(t *testing.T) {
	e, host := clientEnv(t, nil)
	tests := []struct {
		name  string
		att   func() compose.Attachment
		found string // in the sentence
		do    string // the advice
	}{
		{"a Windows program from Drive", func() compose.Attachment {
			return driveAttachment(e.Put(user, drivesvc.FileSpec{Name: "invoice.pdf", Content: peProgram(300_000)}))
		}, `"invoice.pdf" is a Windows program (an .exe or .dll) by its content`, "Send a link to the file instead (link: true); renaming it or putting it in an archive does not get it past Gmail."},
		{"a Linux program from Drive", func() compose.Attachment {
			return driveAttachment(e.Put(user, drivesvc.FileSpec{Name: "notes.txt", Content: elfProgram(300_000)}))
		}, `"notes.txt" is a Linux or Unix program (ELF) by its content`, "Send a link to the file instead (link: true)"},
		{"a macOS program from Drive", func() compose.Attachment {
			return driveAttachment(e.Put(user, drivesvc.FileSpec{Name: "photo.jpg", Content: machOProgram(300_000)}))
		}, `"photo.jpg" is a macOS program (Mach-O) by its content`, "Send a link to the file instead (link: true)"},
		{"a client's file", func() compose.Attachment {
			host.Handle("/invoice", clientfiletest.Serve(peProgram(300_000), "application/pdf", "invoice.pdf"))
			return clientFile(host.URL("", "/invoice"), "invoice.pdf")
		}, `"invoice.pdf" is a Windows program (an .exe or .dll) by its content`, "Gmail does not carry programs, even renamed or inside an archive, so leave it out of the message."},
		{"a Gmail attachment", func() compose.Attachment {
			id := e.deliver(user, "Invoice", nil, inFile{"invoice.pdf", "application/pdf", peProgram(300_000)})
			return gmailAtt(id, "invoice.pdf")
		}, `"invoice.pdf" is a Windows program (an .exe or .dll) by its content`,
			"Gmail will not send it on, whatever its name or archive: leave it out, or put it in Drive with save_to_drive and send a link to it (link: true)."},
		{"inside a Drive zip", func() compose.Attachment {
			return driveAttachment(e.Put(user, drivesvc.FileSpec{Name: "papers.zip", Content: zipHolding(t, "invoice.pdf", peProgram(300_000))}))
		}, `"papers.zip" contains "invoice.pdf", which is a Windows program (an .exe or .dll) by its content`,
			"Send a link to the file instead (link: true), or remove that file from the archive; renaming it does not get it past Gmail."},
		{"inside a Drive tar.gz", func() compose.Attachment {
			return driveAttachment(e.Put(user, drivesvc.FileSpec{Name: "papers.tar.gz", Content: tgzOfFiles(t, "readme.txt", mzText, "tools/run.dat", elfProgram(300_000))}))
		}, `"papers.tar.gz" contains "tools/run.dat", which is a Linux or Unix program (ELF) by its content`, "Send a link to the file instead (link: true)"},
		{"written into the call", func() compose.Attachment {
			return compose.Attachment{Name: "invoice.pdf", Source: compose.Content{Encoding: compose.Base64, Data: base64.StdEncoding.EncodeToString(peProgram(5000))}}
		}, `"invoice.pdf" is a Windows program (an .exe or .dll) by its content`, "Gmail does not carry programs, whatever their name or archive, so leave it out."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			att := tt.att()
			before := e.Emu.Stats()
			_, err := e.send(message(att), compose.Options{})
			r, ok := refusal.As(err)
			if !ok || r.Kind != "blocked_type" || r.Delivery != refusal.NotSent {
				t.Fatalf("err = %v, want a blocked_type refusal, nothing sent", err)
			}
			for _, want := range []string{"Attachment 1: " + tt.found, tt.do} {
				if !strings.Contains(r.Text, want) {
					t.Errorf("%q lacks %q", r.Text, want)
				}
			}
			outboxUnchanged(t, before, e.Emu.Stats())
		})
	}
	if st := e.Emu.Stats(); st.MessagesSent != 0 || st.UploadsFinished != 0 {
		t.Fatalf("outbox: %d sent, %d uploads finished; want none", st.MessagesSent, st.UploadsFinished)
	}

	pdf := e.Put(user, drivesvc.FileSpec{Name: "report.pdf", Content: []byte("%PDF-1.7\n" + strings.Repeat("1 0 obj << >> endobj\n", 5000) + "%%EOF\n")})
	text := e.Put(user, drivesvc.FileSpec{Name: "figures.txt", Content: mzText})
	host.Handle("/mz", clientfiletest.Serve(mzText, "text/plain", "mz.txt"))
	res, err := e.send(message(driveAttachment(pdf), driveAttachment(text), clientFile(host.URL("", "/mz"), "mz.txt")), compose.Options{})
	if err != nil || len(res.Attached) != 3 {
		t.Fatalf("a PDF and two text files that start with MZ: %+v, %v", res.Attached, err)
	}
}
