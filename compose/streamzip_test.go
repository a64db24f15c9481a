package compose_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/blocked"
	"github.com/drivemail/drivemail/clientfile/clientfiletest"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/refusal"
)

// zipWithDirectory is a zip of empty stored entries whose central
// directory is just over dirBytes.
func zipWithDirectory(t *testing.T, dirBytes int) []byte {
	t.Helper()
	const nameLen = 200 // a directory entry: 46 bytes and its name
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := range dirBytes/(46+nameLen) + 1 {
		name := fmt.Sprintf("%0*d", nameLen, i)
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestStreamedZipPastTheDirectoryLimit: a zip with no Range reads (a
// Gmail attachment, a file the chat client holds) whose directory is
// larger than the tail kept while it streams cannot be checked, so it is
// refused in a sentence that says so, with advice that fits its source,
// and nothing is sent; never passed unchecked.
func TestStreamedZipPastTheDirectoryLimit(t *testing.T) {
	e, host := clientEnv(t, nil)
	data := zipWithDirectory(t, blocked.MaxStreamDirBytes)
	host.Handle("/big.zip", clientfiletest.Serve(data, "application/zip", "archive.zip"))
	id := e.deliver(user, "Archive", nil, inFile{"archive.zip", "application/zip", data})
	for _, tt := range []struct {
		source string
		att    compose.Attachment
		advice string
	}{
		{"a Gmail attachment", gmailAtt(id, "archive.zip"), "save_to_drive"},
		{"a client file", clientFile(host.URL("", "/big.zip"), "archive.zip"), "split the archive"},
	} {
		before := e.Emu.Stats()
		_, err := e.send(message(tt.att), compose.Options{})
		r, ok := refusal.As(err)
		if !ok || r.Kind != "archive_too_large" {
			t.Fatalf("%s: err = %v, want archive_too_large", tt.source, err)
		}
		for _, want := range []string{"archive.zip", "too large an archive to check", tt.advice, "Nothing was sent"} {
			if !strings.Contains(r.Text, want) {
				t.Errorf("%s: refusal %q lacks %q", tt.source, r.Text, want)
			}
		}
		outboxUnchanged(t, before, e.Emu.Stats())
	}
}
