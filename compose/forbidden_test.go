package compose_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

// forbidden is the faults that answer one file's next Drive request
// with Drive's 403 for reason: the metadata call, or (after the metadata
// call passes) its first content request, a download or a zip's Range read.
func forbidden(fileID, reason string, metadata bool) []emulator.Fault {
	path := "/drive/v3/files/" + fileID
	deny := emulator.Fault{Method: "GET", PathPrefix: path, Status: 403, Reason: reason, Message: "Google's own text"}
	if metadata {
		return []emulator.Fault{deny}
	}
	return []emulator.Fault{{Method: "GET", PathPrefix: path, Delay: 1_000_000}, deny} // 1 ms: the metadata call passes
}

// TestDriveForbiddenSaysWhatToDo: Drive's 403s that have a known reason
// (a file flagged as malware, a used-up download quota, an administrator's
// policy, an app not granted the file, a role that may not download) are
// refusals that say what happened, that nothing was sent and what to do,
// whether they come on the download, on a zip's Range read before it, or
// on the metadata call.
func TestDriveForbiddenSaysWhatToDo(t *testing.T) {
	tests := []struct {
		reason   string
		zip      bool
		metadata bool
		want     string
	}{
		{"cannotDownloadAbusiveFile", false, false, "flagged attachment 1 (\"report.pdf\") as malware or spam"},
		{"cannotDownloadAbusiveFile", true, false, "flagged attachment 1 (\"bundle.zip\") as malware or spam"},
		{"downloadQuotaExceeded", false, false, "downloaded too many times"},
		{"domainPolicy", false, false, "Workspace administrator does not allow drivemail"},
		{"domainPolicy", false, true, "Workspace administrator does not allow drivemail"},
		{"appNotAuthorizedToFile", false, false, "has not given drivemail access to attachment 1"},
		{"insufficientFilePermissions", false, false, "not allowed to download attachment 1"},
	}
	e := newEnv(t, compose.Config{})
	pdf, _ := e.putBytes("report.pdf", 10_000)
	zip := e.Put(user, drivesvc.FileSpec{Name: "bundle.zip", Content: zipOf(t, "a.txt")})
	for _, tt := range tests {
		name := tt.reason
		if tt.zip {
			name += " on a zip"
		}
		if tt.metadata {
			name += " on the metadata"
		}
		t.Run(name, func(t *testing.T) {
			f := pdf
			if tt.zip {
				f = zip
			}
			e.Inject(forbidden(f.ID, tt.reason, tt.metadata)...)
			before := e.Emu.Stats()
			_, err := e.svc.Send(context.Background(), e.acct(), compose.Request{To: []string{"zoe@example.org"}, Subject: "403", BodyText: "hi",
				Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{})
			if !isRefusal(err) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "Nothing was sent") {
				t.Fatalf("err = %v, want a refusal with %q saying nothing was sent", err, tt.want)
			}
			if strings.Contains(err.Error(), "Google's own text") {
				t.Errorf("the refusal quotes Google's message: %q", err)
			}
			outboxUnchanged(t, before, e.Emu.Stats())
		})
	}
}

// TestUnexplainedFailureAfterGmailIsUnsent: a Drive failure drivemail
// cannot explain, on the second file after the first chunk reached Gmail,
// is an internal error, marked Unsent: nothing was sent.
func TestUnexplainedFailureAfterGmailIsUnsent(t *testing.T) {
	e := newEnv(t, compose.Config{}, account.Options{GmailChunkSize: 256 << 10})
	// As in TestGmailFailureStopsDriveReads: a.pdf fills the first chunk.
	a, _ := e.putBytes("a.pdf", 200_000)
	b, _ := e.putBytes("b.pdf", 1000)
	e.Inject(forbidden(b.ID, "somethingNew", false)...)
	// b.pdf is opened while a.pdf streams: its answer waits for Gmail's
	// first, so that the failure comes after Gmail was contacted.
	w := newWire(t, e.hc.Transport)
	w.hold(b.ID, func(w *wire) bool { return w.gmail > 0 })
	before := e.Emu.Stats()
	_, err := e.sendThrough(w, attach("odd 403", a, b))
	w.held()
	var u *refusal.Unsent
	if err == nil || isRefusal(err) || !errors.As(err, &u) {
		t.Fatalf("err = %v, want an internal error marked Unsent", err)
	}
	after := e.Emu.Stats()
	outboxUnchanged(t, before, after)
	if after.UploadsStarted == before.UploadsStarted {
		t.Errorf("Gmail was never contacted; the case needs a started upload")
	}
}

// TestDraftRefusalsSayNothingWasSaved: a draft that fails says nothing
// was saved, never that nothing was sent, wherever it fails: Drive's
// metadata, a zip's Range read, the stream, a blocked entry found while
// streaming, or Gmail.
func TestDraftRefusalsSayNothingWasSaved(t *testing.T) {
	e := newEnv(t, compose.Config{})
	pdf, _ := e.putBytes("report.pdf", 10_000)
	zip := e.Put(user, drivesvc.FileSpec{Name: "bundle.zip", Content: zipOf(t, "a.txt")})
	tgz := e.Put(user, drivesvc.FileSpec{Name: "tools.tgz", Content: tgzOf(t, map[string]int{"bin/run.exe": 10})})
	tests := []struct {
		name   string
		file   drivesvc.File
		faults []emulator.Fault
	}{
		{"Drive busy on the metadata", pdf, []emulator.Fault{{Method: "GET", PathPrefix: "/drive/v3/files/" + pdf.ID, Status: 503, Times: 3}}},
		{"a 403 on a zip's Range read", zip, forbidden(zip.ID, "cannotDownloadAbusiveFile", false)},
		{"the file gone at download", pdf, []emulator.Fault{
			{Method: "GET", PathPrefix: "/drive/v3/files/" + pdf.ID, Delay: 1_000_000}, // 1 ms: the metadata call passes
			{Method: "GET", PathPrefix: "/drive/v3/files/" + pdf.ID, Status: 404},
		}},
		{"a blocked entry found while streaming", tgz, nil},
		{"Gmail busy", pdf, []emulator.Fault{{Method: "POST", PathPrefix: "/upload/gmail/v1/users/me/drafts", Status: 503}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.Inject(tt.faults...)
			before := e.Emu.Stats()
			_, err := e.svc.Send(context.Background(), e.acct(), compose.Request{To: []string{"zoe@example.org"}, Subject: "draft", BodyText: "hi",
				Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(tt.file.ID)}}}}, compose.Options{Draft: true})
			if !isRefusal(err) || !strings.Contains(err.Error(), "Nothing was saved") && !strings.Contains(err.Error(), "nothing was saved") {
				t.Fatalf("err = %v, want a refusal saying nothing was saved", err)
			}
			if strings.Contains(err.Error(), " sent") {
				t.Errorf("a draft's refusal speaks of sending: %q", err)
			}
			outboxUnchanged(t, before, e.Emu.Stats())
		})
	}
}
