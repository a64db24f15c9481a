package handle_test

import (
	"errors"
	"fmt"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/handle"
)

func ExampleParse() {
	for _, s := range []string{
		"1AbCdEfGhIjKlMnOpQrStUvWxYz012345",
		"https://drive.google.com/file/d/1AbCdEfGhIjKlMnOpQrStUvWxYz012345/view?resourcekey=0-kEy",
		"mcp-file://drivemail.example.com/1AbCdEfGhIjKlMnOpQrStUvWxYz012345",
	} {
		h, err := handle.Parse(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		ref, _ := handle.DriveRef(h)
		fmt.Printf("%T id=%s key=%q\n", h, ref.ID, ref.ResourceKey)
	}
	// Output:
	// handle.Drive id=1AbCdEfGhIjKlMnOpQrStUvWxYz012345 key=""
	// handle.Drive id=1AbCdEfGhIjKlMnOpQrStUvWxYz012345 key="0-kEy"
	// handle.Upload id=1AbCdEfGhIjKlMnOpQrStUvWxYz012345 key=""
}

// A file name, or a link to anywhere but Drive, is not a handle: the
// error says which, so the caller can tell the model what to pass.
func ExampleParse_refused() {
	for _, s := range []string{"Q3 report.pdf", "https://example.com/report.pdf", "mcp-file://h/a/b"} {
		_, err := handle.Parse(s)
		var se *handle.SyntaxError
		if errors.As(err, &se) {
			fmt.Println(se.Problem == handle.NotAnID, se.Problem == handle.ForeignLink, se.Problem == handle.BadUpload)
		}
	}
	// Output:
	// true false false
	// false true false
	// false false true
}

func ExampleUpload_String() {
	h := handle.Upload{Host: "drivemail.example.com", File: drive.Ref{ID: "1AbC"}}
	fmt.Println(h)
	// Output: mcp-file://drivemail.example.com/1AbC
}
