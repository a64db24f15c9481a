package upload_test

import (
	"bytes"
	"context"
	"io"
	"mime"
	"testing"

	"github.com/emersion/go-message"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/handle"
)

// The whole point of /upload: a file from disk goes up, its handle goes
// into send_email, and the recipient gets the same bytes.
func TestUploadThenSendTheHandle(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	data := pattern(2<<20 + 321)
	a := e.postForm("/upload", u.token, part{field: "file", filename: "Q3 figures.xlsx", data: data})
	f := e.mustStore(a, data, "Q3 figures.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")

	// As the send_email tool runs: from the user's account, whose
	// address is the sender.
	svc := compose.New(compose.Config{})
	res, err := svc.Send(context.Background(), u.acct, compose.Request{To: []string{"bob@example.com"}, Subject: "Q3",
		BodyText: "Attached.", Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(a.result.Handle)}}}}, compose.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attached) != 1 || res.Attached[0].FileID != f.ID || res.Attached[0].Bytes != int64(len(data)) {
		t.Errorf("attached = %+v", res.Attached)
	}
	msgs := e.emu.Gmail().Messages(u.email)
	if len(msgs) != 1 {
		t.Fatalf("%d messages sent, want 1", len(msgs))
	}
	raw, err := e.emu.Gmail().OpenRaw(msgs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	got, name := attachment(t, raw)
	if name != "Q3 figures.xlsx" || !bytes.Equal(got, data) {
		t.Errorf("the message carries %q with %d bytes (sha256 %s), want %d bytes (sha256 %s)", name, len(got), sha(got), len(data), sha(data))
	}
}

// attachment returns the first attachment of a raw message, decoded.
func attachment(t *testing.T, r io.Reader) ([]byte, string) {
	t.Helper()
	m, err := message.Read(r)
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	var name string
	err = m.Walk(func(path []int, ent *message.Entity, err error) error {
		if err != nil || body != nil {
			return err
		}
		disp, params, _ := ent.Header.ContentDisposition()
		if disp != "attachment" {
			return nil
		}
		name = params["filename"]
		if name == "" {
			_, ct, _ := mime.ParseMediaType(ent.Header.Get("Content-Type"))
			name = ct["name"]
		}
		body, err = io.ReadAll(ent.Body)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if body == nil {
		t.Fatal("the message has no attachment")
	}
	return body, name
}
