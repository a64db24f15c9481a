package compose_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/logtest"
)

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func zipOf(t *testing.T, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "content of %s\n", n)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// unchanged fails the test if anything was sent, drafted, uploaded or
// downloaded between two snapshots.
func unchanged(t *testing.T, before, after emulator.Stats) {
	t.Helper()
	outboxUnchanged(t, before, after)
	if after.UploadsStarted != before.UploadsStarted {
		t.Errorf("a Gmail upload was started: %d→%d", before.UploadsStarted, after.UploadsStarted)
	}
	if after.Downloads != before.Downloads {
		t.Errorf("downloads changed: %d→%d", before.Downloads, after.Downloads)
	}
}

// TestRefusalsSendNothing: every refusal the plan can foresee comes
// before any download and any Gmail request, with a sentence that says
// what to do, and its "send refused" line names its kind, one that
// docs/operations.md lists.
func TestRefusalsSendNothing(t *testing.T) {
	logs := &logtest.Buffer{}
	e := newEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	documented := compose.DocumentedKinds(t)
	small, _ := e.putBytes("small.pdf", 1000)
	var eleven []compose.Attachment
	for i := 0; i < 11; i++ {
		f, _ := e.putBytes(fmt.Sprintf("f%02d.pdf", i), 100)
		eleven = append(eleven, compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}})
	}
	half := e.Put(user, drivesvc.FileSpec{Name: "half.bin", Reader: io.LimitReader(zeros{}, compose.MaxAttachmentBytes/2)})
	half2 := e.Put(user, drivesvc.FileSpec{Name: "half2.bin", Reader: io.LimitReader(zeros{}, compose.MaxAttachmentBytes/2+1)})
	exe, _ := e.putBytes("setup.exe", 100)
	doc := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x"})
	sheet := e.Put(user, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet, Tabs: []drivesvc.Tab{{Title: "Summary"}, {Title: "Q1"}}})
	theirs, _ := func() (drivesvc.File, []byte) {
		return e.Put(other, drivesvc.FileSpec{Name: "private.pdf", Content: []byte("secret")}), nil
	}()
	logo, _ := e.putBytes("logo.png", 100)
	photo, _ := e.putBytes("photo.png", 100)
	const unknownID = "1ZzZzZzZzZzZzZzZzZzZzZzZzZzZzZzZz"

	base := func() compose.Request {
		return compose.Request{To: []string{"zoe@example.org"}, Subject: "Files", BodyText: "hi"}
	}
	with := func(atts ...compose.Attachment) compose.Request {
		r := base()
		r.Attachments = atts
		return r
	}
	tests := []struct {
		name string
		req  compose.Request
		want string
		kind string
	}{
		{"11 files", with(eleven...), "11 files", "too_many_files"},
		{"26 MiB of known sizes", with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(half.ID)}}, compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(half2.ID)}}), "at most 25 MiB", "too_large"},
		{"a blocked .exe", with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(exe.ID)}}), `"setup.exe" is a .exe file`, "blocked_type"},
		{"an unknown id", with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(unknownID)}}), "is visible to this Google account", "unknown_file"},
		{"another user's id", with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(theirs.ID)}}), "is visible to this Google account", "unknown_file"},
		{"a bad address", func() compose.Request {
			r := with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(small.ID)}})
			r.To = []string{"not an address"}
			return r
		}(), "not an address", "invalid_address"},
		{"CR/LF in the subject", func() compose.Request {
			r := with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(small.ID)}})
			r.Subject = "Hi\r\nBcc: victim@example.org"
			return r
		}(), "ubject", "invalid_subject"},
		{"thread_id without a Message-ID to answer", func() compose.Request {
			r := with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(small.ID)}})
			r.ThreadID = "18f3a2b4c5d6e7f8"
			return r
		}(), "Pass in_reply_to", "thread_without_reply"},
		{"in_reply_to that is not a Message-ID", func() compose.Request {
			r := with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(small.ID)}})
			r.ThreadID, r.InReplyTo = "18f3a2b4c5d6e7f8", "the last message"
			return r
		}(), "is not a valid message id for in_reply_to", "invalid_in_reply_to"},
		{"in_reply_to of 501 characters", func() compose.Request {
			r := with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(small.ID)}})
			r.InReplyTo = "<" + strings.Repeat("a", 490) + "@example.org>"
			return r
		}(), "it is too long", "invalid_in_reply_to"},
		{"a reference with a line break", func() compose.Request {
			r := with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(small.ID)}})
			r.InReplyTo, r.References = "<a@example.org>", []string{"<b@example.org>\r\nBcc: victim@example.org"}
			return r
		}(), "is not a valid message id for references", "invalid_in_reply_to"},
		{"101 references", func() compose.Request {
			r := with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(small.ID)}})
			for i := range 101 {
				r.References = append(r.References, fmt.Sprintf("<m%d@example.org>", i))
			}
			return r
		}(), `"references" has 101 entries; give at most 100`, "invalid_in_reply_to"},
		{"an unknown export format", with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(doc.ID), As: "xlsx"}}), "pdf, docx", "bad_format"},
		{"a bad tab name", with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(sheet.ID), As: "csv", Sheet: "Q9"}}), `"Summary", "Q1"`, "bad_tab"},
		{"two inline files of one name", func() compose.Request {
			r := with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(logo.ID)}}, compose.Attachment{Name: "logo.png", Source: compose.DriveFile{Handle: handle.MustParse(photo.ID)}})
			r.BodyHTML = `<img src="cid:logo.png"><img src="cid:photo.png">`
			return r
		}(), `attachments 1 and 2 inline, but both are named "logo.png"`, "same_name_inline"},
		{"a dangling cid:", func() compose.Request {
			r := with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(small.ID)}})
			r.BodyHTML = `<img src="cid:chart.png">`
			return r
		}(), "cid:chart.png", "dangling_cid"},
		{"bad base64", with(compose.Attachment{Name: "scan.pdf", Source: compose.Content{Encoding: compose.Base64, Data: "@@@@"}}), "not valid base64", "bad_base64"},
		{"content with no name", with(compose.Attachment{Source: compose.Content{Encoding: compose.Text, Data: "a,b"}}), "has content but no name", "no_name"},
		{"a link with as", with(compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(doc.ID), Link: true, As: "pdf"}}), `both "link": true and "as"`, "bad_option"},
		{"a .exe written into the call", with(compose.Attachment{Name: "setup.exe", Source: compose.Content{Encoding: compose.Text, Data: "MZ"}}), "leave it out", "blocked_type"},
	}
	texts := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.Emu.Stats()
			logs.Reset()
			_, err := e.send(tt.req, compose.Options{})
			if !isRefusal(err) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("refusal %q does not mention %q", err, tt.want)
			}
			texts[tt.name] = err.Error()
			t.Log(err)
			unchanged(t, before, e.Emu.Stats())
			line := logs.String()
			if !strings.Contains(line, `msg="send refused"`) || !regexp.MustCompile(`(?m) refusal=`+tt.kind+`( |$)`).MatchString(line) {
				t.Errorf("the send refused line does not name the kind %s:\n%s", tt.kind, line)
			}
			if !documented[tt.kind] {
				t.Errorf("kind %q is not listed in docs/operations.md", tt.kind)
			}
		})
	}
	unknown := strings.ReplaceAll(texts["an unknown id"], unknownID, "ID")
	foreign := strings.ReplaceAll(texts["another user's id"], theirs.ID, "ID")
	if unknown != foreign {
		t.Errorf("another user's file and a missing one read differently:\n%s\n%s", foreign, unknown)
	}
}

// TestZipWithBlockedEntry: a zip holding an .exe is refused after a few
// small Range reads of its directory, not a download.
func TestZipWithBlockedEntry(t *testing.T) {
	e := newEnv(t, compose.Config{})
	// A zip with a large first entry, so reading it whole would show.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "data.bin", Method: zip.Store})
	io.Copy(w, io.LimitReader(zeros{}, 2<<20))
	w, _ = zw.Create("tools/setup.exe")
	w.Write([]byte("MZ"))
	zw.Close()
	z := e.Put(user, drivesvc.FileSpec{Name: "bundle.zip", Content: buf.Bytes()})
	ok := e.Put(user, drivesvc.FileSpec{Name: "fine.zip", Content: zipOf(t, "a.txt", "b/c.pdf")})

	before := e.Emu.Stats()
	_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "zip", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(z.ID)}}}}, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), "setup.exe") {
		t.Fatalf("err = %v, want a refusal naming setup.exe", err)
	}
	after := e.Emu.Stats()
	if after.MessagesSent != before.MessagesSent || after.UploadsStarted != before.UploadsStarted {
		t.Errorf("something was sent or an upload started")
	}
	if after.Downloads != before.Downloads || after.BytesServed != before.BytesServed {
		t.Errorf("the refusal downloaded something: downloads %d→%d, bytes %d→%d",
			before.Downloads, after.Downloads, before.BytesServed, after.BytesServed)
	}
	read := after.Files[z.ID].RangeBytes - before.Files[z.ID].RangeBytes
	if read == 0 || read > 128<<10 {
		t.Errorf("checking the zip read %d bytes of a %d-byte file by Range; want only its directory", read, len(buf.Bytes()))
	}
	t.Logf("zip check: %d bytes read in %d Range requests, of a %d-byte archive", read,
		after.Files[z.ID].RangeReads-before.Files[z.ID].RangeReads, len(buf.Bytes()))

	// An ordinary zip goes.
	res, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "zip", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(ok.ID)}}}}, compose.Options{})
	if err != nil || len(res.Attached) != 1 {
		t.Fatalf("fine.zip: %v %+v", err, res)
	}
}

// TestSameNameInlineFixedAsTold: two inline files of one name are refused
// with a sentence that says to rename one and refer to the new name; done
// as told, the message goes with both images inline.
func TestSameNameInlineFixedAsTold(t *testing.T) {
	e := newEnv(t, compose.Config{})
	logo, _ := e.putBytes("logo.png", 100)
	photo, _ := e.putBytes("photo.png", 200)
	req := compose.Request{To: []string{"zoe@example.org"}, Subject: "logos", BodyHTML: `<img src="cid:logo.png"><img src="cid:photo.png">`,
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(logo.ID)}}, {Name: "logo.png", Source: compose.DriveFile{Handle: handle.MustParse(photo.ID)}}}}
	_, err := e.send(req, compose.Options{})
	if !isRefusal(err) || !strings.Contains(err.Error(), `"name": "logo-2.png"`) || !strings.Contains(err.Error(), `cid:logo-2.png`) {
		t.Fatalf("err = %v, want a refusal that says to rename attachment 2 logo-2.png", err)
	}
	req.Attachments[1].Name = "logo-2.png"
	req.BodyHTML = `<img src="cid:logo.png"><img src="cid:logo-2.png">`
	res, err := e.send(req, compose.Options{})
	if err != nil {
		t.Fatalf("renamed as told: %v", err)
	}
	if len(res.Inline) != 2 || res.Inline[0].ContentID == res.Inline[1].ContentID {
		t.Errorf("inline = %+v, want two parts with their own Content-IDs", res.Inline)
	}
}
