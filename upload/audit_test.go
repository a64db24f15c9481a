package upload_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/upload"
)

// TestRefusalLogNamesNoFileName: a refused upload logs the refusal's kind
// and status, never the sentence, which quotes what the caller sent (file
// names, folder ids, form fields, lines of a malformed body).
func TestRefusalLogNamesNoFileName(t *testing.T) {
	e := newEnv(t)
	u := e.signIn("ann@example.com")
	tk := e.ticket(u, upload.Request{Name: "Quarterly plan.pdf"})

	malformed := "--XYZ\r\nSecretHeaderLine without a colon\r\n\r\ndata\r\n--XYZ--\r\n"
	cases := []struct {
		name   string
		send   func() answer
		status int
		kind   string
	}{
		{"name mismatch", func() answer {
			return e.postForm(ticketPath(tk), "", part{field: "file", filename: "SecretMerger.pdf", data: []byte("x")})
		}, http.StatusForbidden, "name_mismatch"},
		{"bad folder id", func() answer {
			return e.sendRaw(http.MethodPost, "/upload?name=a.txt&folder_id=SecretFolder%20Name", u.token, []byte("x"))
		}, http.StatusBadRequest, "bad_folder_id"},
		{"unknown query parameter", func() answer {
			return e.sendRaw(http.MethodPost, "/upload?SecretParam=1", u.token, []byte("x"))
		}, http.StatusBadRequest, "unknown_query"},
		{"unknown form field", func() answer {
			return e.postForm("/upload", u.token, part{field: "SecretField", data: []byte("x")}, part{field: "file", filename: "a.txt", data: []byte("x")})
		}, http.StatusBadRequest, "unknown_field"},
		{"malformed form", func() answer {
			return e.sendRaw(http.MethodPost, "/upload", u.token, []byte(malformed), "Content-Type", "multipart/form-data; boundary=XYZ")
		}, http.StatusBadRequest, "form_malformed"},
	}
	for _, tc := range cases {
		a := tc.send()
		if a.status != tc.status {
			t.Fatalf("%s: status %d (%s), want %d", tc.name, a.status, a.raw, tc.status)
		}
		// The caller is told what was wrong (a malformed form, only that).
		if tc.kind != "form_malformed" && !strings.Contains(a.errMsg, "Secret") {
			t.Errorf("%s: the refusal should quote what was wrong: %q", tc.name, a.errMsg)
		}
		e.waitLog("refusal=" + tc.kind)
	}
	logs := e.logs.String()
	if n := strings.Count(logs, `msg="upload refused"`); n != len(cases) {
		t.Errorf("%d refusal lines, want %d:\n%s", n, len(cases), logs)
	}
	if strings.Contains(logs, "Secret") {
		t.Errorf("a refusal's log line shows what the caller sent:\n%s", logs)
	}
	if !strings.Contains(logs, "status=403 refusal=name_mismatch") {
		t.Errorf("the refusal lines should give status and kind:\n%s", logs)
	}
}
