package mimemsg_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"strings"
	"time"

	"github.com/drivemail/drivemail/mimemsg"
)

// A message with a text body and one attachment, built in the two steps:
// Prepare checks every header and name without opening the file; Stream
// opens it when it gets there and writes the message once.
func Example() {
	p, err := mimemsg.Prepare(mimemsg.Message{
		From:    "Ana <ana@example.com>",
		To:      []string{"bo@example.org"},
		Subject: "Notes, café",
		// Fixed here so the output below does not change; left zero, they
		// are the time of Prepare and a new <uuid@example.com>.
		Date:      time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC),
		MessageID: "notes-1@example.com",
		Text:      "The notes are attached.\n",
		Attachments: []mimemsg.Part{{
			Name:        "notes.csv",
			ContentType: "text/csv",
			Size:        6,
			Open: func(context.Context) (io.ReadCloser, error) {
				return io.NopCloser(strings.NewReader("a,b\n1\n")), nil
			},
		}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var out bytes.Buffer
	written, err := p.Stream(context.Background(), &out)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d bytes, %d of them file content\n\n", written.Bytes, written.FileBytes)
	fmt.Print(showable(out.String()))
	// Output:
	// 632 bytes, 6 of them file content
	//
	// Mime-Version: 1.0
	// Date: Sun, 01 Mar 2026 09:30:00 +0000
	// Message-Id: <notes-1@example.com>
	// Subject: =?utf-8?b?Tm90ZXMsIGNhZsOp?=
	// From: "Ana" <ana@example.com>
	// To: <bo@example.org>
	// Content-Type: multipart/mixed; boundary="BOUNDARY"
	//
	// --BOUNDARY
	// Content-Type: text/plain; charset=utf-8
	// Content-Transfer-Encoding: quoted-printable
	//
	// The notes are attached.
	//
	// --BOUNDARY
	// Content-Type: text/csv; name="notes.csv"
	// Content-Disposition: attachment; filename="notes.csv"
	// Content-Transfer-Encoding: base64
	//
	// YSxiCjEK
	// --BOUNDARY--
}

// A bad address is refused by Prepare, before any file is opened; the
// error names the field at fault and is a sentence for the user.
func ExamplePrepare_refused() {
	_, err := mimemsg.Prepare(mimemsg.Message{
		From: "ana@example.com",
		To:   []string{"bo at example.org"},
		Text: "hi",
	})
	var in *mimemsg.InputError
	if errors.As(err, &in) {
		fmt.Println(in.Field + ": " + err.Error())
	}
	// Output:
	// to: "bo at example.org" is not a valid to address; write it as name@example.com or Name <name@example.com>, and separate several with commas
}

// showable puts a fixed word in place of the message's random multipart
// boundary, and LF line ends in place of CRLF, so an Output comment can
// hold the message.
func showable(msg string) string {
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	m, err := mail.ReadMessage(strings.NewReader(msg))
	if err != nil {
		return err.Error()
	}
	_, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
	if err != nil || params["boundary"] == "" {
		return msg
	}
	return strings.ReplaceAll(msg, params["boundary"], "BOUNDARY")
}
