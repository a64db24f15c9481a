package media

import (
	"bytes"
	"encoding/base64"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"testing"
)

// multipartBody builds a multipart/related body of parts (header, content).
func multipartBody(t *testing.T, parts ...[2]string) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		hdr := textproto.MIMEHeader{}
		for _, line := range strings.Split(p[0], "\n") {
			if k, v, ok := strings.Cut(line, ": "); ok {
				hdr.Set(k, v)
			}
		}
		w, err := mw.CreatePart(hdr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(p[1]))
	}
	_ = mw.Close()
	return buf.Bytes(), "multipart/related; boundary=" + mw.Boundary()
}

func TestMultipartUpload(t *testing.T) {
	h := newHarness(t, harnessOptions{maxSize: 64, accept: []string{"message/*"}})
	msg := "To: b@example.com\r\n\r\nhi\r\n"
	for _, tc := range []struct {
		name    string
		parts   [][2]string
		code    int
		reason  string
		content string
	}{
		{"metadata and media", [][2]string{{"Content-Type: application/json", `{"threadId":"x"}`}, {"Content-Type: message/rfc822", msg}}, 200, "", msg},
		{"base64 media part", [][2]string{{"Content-Type: application/json", `{}`}, {"Content-Type: message/rfc822\nContent-Transfer-Encoding: base64", base64.StdEncoding.EncodeToString([]byte(msg))[:20] + "\r\n" + base64.StdEncoding.EncodeToString([]byte(msg))[20:]}}, 200, "", msg},
		{"exactly the limit", [][2]string{{"Content-Type: application/json", `{}`}, {"Content-Type: message/rfc822", strings.Repeat("x", 64)}}, 200, "", strings.Repeat("x", 64)},
		{"one byte over the limit", [][2]string{{"Content-Type: application/json", `{}`}, {"Content-Type: message/rfc822", strings.Repeat("x", 65)}}, 413, "uploadTooLarge", ""},
		{"media type not accepted", [][2]string{{"Content-Type: application/json", `{}`}, {"Content-Type: text/plain", msg}}, 400, "badContent", ""},
		{"no media part", [][2]string{{"Content-Type: application/json", `{}`}}, 400, "badRequest", ""},
		{"metadata not JSON", [][2]string{{"Content-Type: application/json", `{`}, {"Content-Type: message/rfc822", msg}}, 400, "badRequest", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.uploads())
			body, ctype := multipartBody(t, tc.parts...)
			code, _, resp := h.do("POST", h.url("uploadType=multipart"), map[string]string{"Content-Type": ctype}, body)
			if code != tc.code {
				t.Fatalf("%d %s, want %d", code, resp, tc.code)
			}
			ups := h.uploads()
			if tc.code != 200 {
				if googleReason(t, resp) != tc.reason || len(ups) != before {
					t.Errorf("refusal %s, want reason %s and no upload", resp, tc.reason)
				}
				return
			}
			if len(ups) != before+1 || string(ups[before].content) != tc.content || ups[before].ContentType != "message/rfc822" {
				t.Errorf("stored %d uploads; last %q", len(ups)-before, ups[len(ups)-1].content)
			}
		})
	}
}

func TestMultipartMetadataLimit(t *testing.T) {
	h := newHarness(t, harnessOptions{opts: Options{MaxMetadata: 16}})
	for _, tc := range []struct {
		meta string
		code int
	}{
		{`{"a":"0123456789"}`[:16], 400}, // 16 bytes but cut: not JSON
		{`{"a":"012345678"}`, 400},       // 17 bytes: over
		{`{"a":"01234567"}`, 200},        // 16 bytes: at the edge
	} {
		body, ctype := multipartBody(t, [2]string{"Content-Type: application/json", tc.meta}, [2]string{"Content-Type: message/rfc822", "x"})
		if code, _, resp := h.do("POST", h.url("uploadType=multipart"), map[string]string{"Content-Type": ctype}, body); code != tc.code {
			t.Errorf("metadata %q (%d bytes): %d %s, want %d", tc.meta, len(tc.meta), code, resp, tc.code)
		}
	}
}

func TestMediaUpload(t *testing.T) {
	h := newHarness(t, harnessOptions{maxSize: 10, accept: []string{"message/*"}})
	if code, _, body := h.do("POST", h.url("uploadType=media"), map[string]string{"Content-Type": "message/rfc822"}, []byte("0123456789")); code != 200 {
		t.Fatalf("10 bytes: %d %s", code, body)
	}
	if ups := h.uploads(); len(ups) != 1 || string(ups[0].content) != "0123456789" || ups[0].Metadata != nil {
		t.Fatalf("uploads = %+v", ups)
	}
	if code, _, body := h.do("POST", h.url("uploadType=media"), map[string]string{"Content-Type": "message/rfc822"}, []byte("0123456789A")); code != 413 {
		t.Errorf("11 bytes: %d %s, want 413", code, body)
	}
	if code, _, body := h.do("POST", h.url("uploadType=media"), nil, []byte("x")); code != 400 || googleReason(t, body) != "badContent" {
		t.Errorf("no Content-Type: %d %s, want 400 badContent (application/octet-stream is not message/*)", code, body)
	}
	// Without uploadType a plain body is a media upload.
	if code, _, body := h.do("POST", h.url(""), map[string]string{"Content-Type": "message/rfc822"}, []byte("y")); code != 200 {
		t.Errorf("no uploadType: %d %s", code, body)
	}
	if code, _, body := h.do("POST", h.url("uploadType=chunked"), map[string]string{"Content-Type": "message/rfc822"}, []byte("y")); code != 400 || !strings.Contains(string(body), "use media, multipart or resumable") {
		t.Errorf("unknown uploadType: %d %s", code, body)
	}
	if code, _, _ := h.do("PUT", h.url("uploadType=media"), nil, nil); code != 400 {
		t.Errorf("PUT without upload_id: %d, want 400", code)
	}
	st := h.deps.Stats.Snapshot()
	if st.UploadsFinished != 2 {
		t.Errorf("uploads finished = %d, want 2", st.UploadsFinished)
	}
}

func TestUploadNeedsAuthorization(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.token = "ya29.not-a-token"
	for _, typ := range []string{"media", "multipart", "resumable"} {
		code, hd, _ := h.do("POST", h.url("uploadType="+typ), map[string]string{"Content-Type": "message/rfc822"}, []byte("x"))
		if code != http.StatusUnauthorized || hd.Get("Location") != "" {
			t.Errorf("%s without a valid token: %d", typ, code)
		}
	}
	if st := h.deps.Stats.Snapshot(); st.UploadsStarted != 0 {
		t.Errorf("uploads started = %d by unauthorized requests", st.UploadsStarted)
	}
}

func TestAccepts(t *testing.T) {
	for _, tc := range []struct {
		patterns []string
		typ      string
		want     bool
	}{
		{nil, "anything/at-all", true},
		{[]string{"*/*"}, "image/png", true},
		{[]string{"message/*"}, "message/rfc822", true},
		{[]string{"message/*"}, "Message/RFC822; charset=utf-8", true},
		{[]string{"message/*"}, "messages/rfc822", false},
		{[]string{"message/*"}, "text/plain", false},
		{[]string{"image/png"}, "image/png", true},
		{[]string{"image/png"}, "image/pngx", false},
		{[]string{"message/*"}, "", false},
	} {
		if got := accepts(tc.patterns, tc.typ); got != tc.want {
			t.Errorf("accepts(%v, %q) = %v, want %v", tc.patterns, tc.typ, got, tc.want)
		}
	}
}
