package media

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// u is the chunk unit: every chunk but the last is a multiple of it.
const u = ChunkUnit

func chunkHeader(first, last int, total string) map[string]string {
	return map[string]string{
		"Content-Type":       "message/rfc822",
		"Content-Range":      fmt.Sprintf("bytes %d-%d/%s", first, last, total),
		"X-GUploader-No-308": "yes",
	}
}

func TestResumableChunksWithNo308Header(t *testing.T) {
	synctest.Test(t, testResumableChunksWithNo308Header)
}

func testResumableChunksWithNo308Header(t *testing.T) {
	h := newBubbleHarness(t, harnessOptions{accept: []string{"message/*"}})
	loc := h.open(nil, `{"threadId":"t1"}`)
	content := pattern(3 * u)

	// Nothing received yet: a status query has no Range.
	code, hd, _ := h.do("PUT", loc, map[string]string{"Content-Range": "bytes */*", "X-GUploader-No-308": "yes"}, nil)
	if code != 200 || hd.Get("X-Http-Status-Code-Override") != "308" || hd.Get("Range") != "" {
		t.Fatalf("empty status query: %d override=%q range=%q", code, hd.Get("X-Http-Status-Code-Override"), hd.Get("Range"))
	}
	// A middle chunk, then the same chunk again (a retry), then one that overlaps.
	steps := []struct {
		name        string
		first, last int
		wantRange   string
	}{
		{"first chunk", 0, u - 1, fmt.Sprintf("bytes=0-%d", u-1)},
		{"repeated chunk", 0, u - 1, fmt.Sprintf("bytes=0-%d", u-1)},
		{"overlapping chunk", u / 2, u/2 + u - 1, fmt.Sprintf("bytes=0-%d", u/2+u-1)},
	}
	for _, st := range steps {
		code, hd, body := h.do("POST", loc, chunkHeader(st.first, st.last, "*"), content[st.first:st.last+1])
		if code != 200 || hd.Get("X-Http-Status-Code-Override") != "308" || hd.Get("Range") != st.wantRange {
			t.Fatalf("%s: %d override=%q range=%q body=%s", st.name, code, hd.Get("X-Http-Status-Code-Override"), hd.Get("Range"), body)
		}
	}
	if n := len(h.uploads()); n != 0 {
		t.Fatalf("%d uploads finished before the final chunk", n)
	}
	last := u/2 + u // the final chunk, of any size
	total := fmt.Sprint(len(content))
	code, _, final := h.do("PUT", loc, chunkHeader(last, len(content)-1, total), content[last:])
	if code != 200 {
		t.Fatalf("final chunk: %d %s", code, final)
	}
	ups := h.uploads()
	if len(ups) != 1 || !bytes.Equal(ups[0].content, content) {
		t.Fatalf("finished %d uploads; content equal: %v", len(ups), len(ups) == 1 && bytes.Equal(ups[0].content, content))
	}
	if string(ups[0].Metadata) != `{"threadId":"t1"}` || ups[0].ContentType != "message/rfc822" || ups[0].Token.Email != "ann@example.com" {
		t.Errorf("upload = metadata %s type %q user %q", ups[0].Metadata, ups[0].ContentType, ups[0].Token.Email)
	}
	if ups[0].PathValues["userId"] != "me" {
		t.Errorf("path values = %v, want userId=me", ups[0].PathValues)
	}

	// The final chunk resent, a status query and a finalize query all answer the same resource.
	for _, hdr := range []map[string]string{
		chunkHeader(last, len(content)-1, total),
		{"Content-Range": "bytes */*"},
		{"Content-Range": "bytes */" + total},
	} {
		var body []byte
		if !strings.HasPrefix(hdr["Content-Range"], "bytes */") {
			body = content[last:]
		}
		code, _, again := h.do("PUT", loc, hdr, body)
		if code != 200 || !bytes.Equal(again, final) {
			t.Errorf("asked again with %q: %d %s, want the first answer %s", hdr["Content-Range"], code, again, final)
		}
	}
	if n := len(h.uploads()); n != 1 {
		t.Errorf("%d uploads finished, want exactly 1", n)
	}
	st := h.deps.Stats.Snapshot()
	if st.UploadsStarted != 1 || st.UploadsFinished != 1 {
		t.Errorf("stats started=%d finished=%d, want 1 and 1", st.UploadsStarted, st.UploadsFinished)
	}
}

func TestResumableReal308WithoutHeader(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	loc := h.open(nil, "")
	hdr := chunkHeader(0, u-1, "*")
	delete(hdr, "X-GUploader-No-308")
	code, hd, _ := h.do("PUT", loc, hdr, pattern(u))
	if code != http.StatusPermanentRedirect || hd.Get("Range") != fmt.Sprintf("bytes=0-%d", u-1) || hd.Get("X-Http-Status-Code-Override") != "" {
		t.Fatalf("middle chunk without No-308: %d range=%q override=%q", code, hd.Get("Range"), hd.Get("X-Http-Status-Code-Override"))
	}
	if hd.Get("Location") != "" {
		t.Errorf("308 carries a Location %q: a client would follow it", hd.Get("Location"))
	}
}

func TestResumableFinalizeByStatusQueryAtChunkBoundary(t *testing.T) {
	// The Go client sends "bytes */N" with no body when the content ends
	// exactly at a chunk boundary.
	h := newHarness(t, harnessOptions{})
	loc := h.open(nil, "")
	content := pattern(u)
	h.do("PUT", loc, chunkHeader(0, u-1, "*"), content)
	code, _, body := h.do("PUT", loc, map[string]string{"Content-Range": fmt.Sprintf("bytes */%d", u)}, nil)
	if code != 200 || len(h.uploads()) != 1 || !bytes.Equal(h.uploads()[0].content, content) {
		t.Fatalf("finalize by bytes */%d: %d %s, %d uploads", u, code, body, len(h.uploads()))
	}
}

func TestResumableWholeBodyWithoutContentRange(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	loc := h.open(map[string]string{"X-Upload-Content-Length": "5"}, "")
	code, _, body := h.do("PUT", loc, map[string]string{"Content-Type": "message/rfc822"}, []byte("hello"))
	if code != 200 || len(h.uploads()) != 1 || string(h.uploads()[0].content) != "hello" {
		t.Fatalf("single PUT: %d %s", code, body)
	}
}

func TestResumableRefusals(t *testing.T) {
	r := func(first, last int, total string) map[string]string {
		return map[string]string{"Content-Range": fmt.Sprintf("bytes %d-%d/%s", first, last, total)}
	}
	for _, tc := range []struct {
		name   string
		header map[string]string
		body   []byte
		says   string // what the refusal must say ("": something after a colon)
	}{
		{"gap after the received bytes", chunkHeader(2*u, 3*u-1, "*"), pattern(u), ""},
		{"body shorter than the range", r(u, 2*u-1, "*"), pattern(10), ""},
		{"last before first", map[string]string{"Content-Range": "bytes 19-10/*"}, nil, ""},
		{"last past the total", r(u, u+9, fmt.Sprint(u+5)), pattern(10), ""},
		{"not bytes", map[string]string{"Content-Range": "items 10-19/*"}, pattern(10), ""},
		{"no slash", map[string]string{"Content-Range": "bytes 10-19"}, pattern(10), ""},
		{"negative total", map[string]string{"Content-Range": "bytes */-1"}, nil, ""},
		{"garbage numbers", map[string]string{"Content-Range": "bytes a-b/*"}, pattern(2), ""},
		{"star with a body", map[string]string{"Content-Range": "bytes */*"}, pattern(3), ""},
		{"total smaller than received", map[string]string{"Content-Range": "bytes */5"}, nil, ""},
		{"total changes", r(u, 2*u-1, fmt.Sprint(4*u)), pattern(u), ""},
		// Google's rule: a chunk that does not complete the upload is a
		// multiple of 256 KiB; the words are the upload server's.
		{"middle chunk under 256 KiB", chunkHeader(u, u+9, "*"), pattern(10),
			"The number of bytes uploaded is required to be equal or greater than 262144, except for the final request (it's recommended to be the exact multiple of 262144).  The received request contained 10 bytes"},
		{"middle chunk of 256 KiB minus one", chunkHeader(u, 2*u-2, "*"), pattern(u - 1), "contained 262143 bytes"},
		{"middle chunk of 256 KiB plus one", chunkHeader(u, 2*u, "*"), pattern(u + 1), "must be a multiple of 262144.  The received request contained 262145 bytes"},
		{"short chunk before the declared total", r(u, u+9, fmt.Sprint(3*u)), pattern(10), "contained 10 bytes"},
	} {
		t.Run(tc.name, inBubble(func(t *testing.T) {
			h := newBubbleHarness(t, harnessOptions{})
			loc := h.open(nil, "")
			h.do("PUT", loc, chunkHeader(0, u-1, fmt.Sprint(3*u)), pattern(u)) // the session holds u of 3u bytes
			code, _, body := h.do("PUT", loc, tc.header, tc.body)
			if code != 400 || googleReason(t, body) != "badRequest" {
				t.Fatalf("%d %s, want 400 badRequest", code, body)
			}
			if tc.says == "" && !strings.Contains(string(body), ":") || !strings.Contains(string(body), tc.says) {
				t.Errorf("refusal %s does not say %q", body, tc.says)
			}
			// A 4xx ends the session, as Google's guide says: asked how
			// far it got, it is not found, and nothing was made of it.
			code, _, body = h.do("PUT", loc, map[string]string{"Content-Range": "bytes */*", "X-GUploader-No-308": "yes"}, nil)
			if code != 404 || googleReason(t, body) != "notFound" {
				t.Errorf("status query after the refusal: %d %s, want 404 notFound", code, body)
			}
			if n := len(h.uploads()); n != 0 {
				t.Errorf("%d uploads finished from a refused session", n)
			}
		}))
	}
}

// TestResumableChunkSizesAtTheEdge: middle chunks of whole units pass, and
// a last chunk of any size, whether it declares the total or the session
// was told it when it opened.
func TestResumableChunkSizesAtTheEdge(t *testing.T) {
	content := pattern(3*u + 7)
	n := len(content)
	type chunk struct {
		first, end int  // bytes first..end-1
		total      bool // declare the total
	}
	for _, tc := range []struct {
		name   string
		open   map[string]string
		chunks []chunk
	}{
		{"one unit, then two, then 7 bytes", nil, []chunk{{0, u, false}, {u, 3 * u, false}, {3 * u, n, true}}},
		{"a last chunk of 7 bytes without its total, the session knowing it",
			map[string]string{"X-Upload-Content-Length": fmt.Sprint(n)}, []chunk{{0, 3 * u, false}, {3 * u, n, false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			loc := h.open(tc.open, "")
			for _, c := range tc.chunks {
				total := "*"
				if c.total {
					total = fmt.Sprint(n)
				}
				if code, _, body := h.do("PUT", loc, chunkHeader(c.first, c.end-1, total), content[c.first:c.end]); code != 200 {
					t.Fatalf("chunk %d-%d/%s: %d %s", c.first, c.end-1, total, code, body)
				}
			}
			if ups := h.uploads(); len(ups) != 1 || !bytes.Equal(ups[0].content, content) {
				t.Fatalf("%d uploads finished, want the whole content once", len(ups))
			}
		})
	}
}

func TestResumableOpenRefusals(t *testing.T) {
	h := newHarness(t, harnessOptions{maxSize: 100, accept: []string{"message/*"}})
	for _, tc := range []struct {
		name   string
		header map[string]string
		body   string
		code   int
		reason string
	}{
		{"declared length over the limit", map[string]string{"X-Upload-Content-Length": "101"}, "", 413, "uploadTooLarge"},
		{"declared length not a number", map[string]string{"X-Upload-Content-Length": "lots"}, "", 400, "badRequest"},
		{"media type not accepted", map[string]string{"X-Upload-Content-Type": "text/plain"}, "", 400, "badContent"},
		{"metadata not JSON", nil, "{nope", 400, "badRequest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{"Content-Type": "application/json", "X-Upload-Content-Type": "message/rfc822"}
			for k, v := range tc.header {
				hdr[k] = v
			}
			code, hd, body := h.do("POST", h.url("uploadType=resumable"), hdr, []byte(tc.body))
			if code != tc.code || googleReason(t, body) != tc.reason || hd.Get("Location") != "" {
				t.Fatalf("%d %s (Location %q), want %d %s", code, body, hd.Get("Location"), tc.code, tc.reason)
			}
		})
	}
	// Exactly at the limit is fine.
	h.open(map[string]string{"X-Upload-Content-Length": "100"}, "")
	if st := h.deps.Stats.Snapshot(); st.UploadsStarted != 1 {
		t.Errorf("uploads started = %d, want 1 (refused opens do not count)", st.UploadsStarted)
	}
}

func TestResumableMaxSizeAtTheEdge(t *testing.T) {
	const max = 2*u + 100
	h := newHarness(t, harnessOptions{maxSize: max})
	total := fmt.Sprint(max)
	// Exactly MaxSize bytes in two chunks completes.
	loc := h.open(nil, "")
	h.do("PUT", loc, chunkHeader(0, 2*u-1, "*"), pattern(2*u))
	if code, _, body := h.do("PUT", loc, chunkHeader(2*u, max-1, total), pattern(max)[2*u:]); code != 200 {
		t.Fatalf("exactly %d bytes: %d %s", max, code, body)
	}
	// One byte more is refused, and the session ends (a 4xx).
	loc = h.open(nil, "")
	h.do("PUT", loc, chunkHeader(0, 2*u-1, "*"), pattern(2*u))
	code, _, body := h.do("PUT", loc, chunkHeader(2*u, max, "*"), pattern(max + 1)[2*u:])
	if code != 413 || googleReason(t, body) != "uploadTooLarge" || !strings.Contains(string(body), total+" bytes") {
		t.Fatalf("%d bytes: %d %s, want 413 uploadTooLarge naming the limit", max+1, code, body)
	}
	code, _, again := h.do("PUT", loc, map[string]string{"Content-Range": "bytes */*"}, nil)
	if code != 404 || googleReason(t, again) != "notFound" {
		t.Errorf("status after refusal: %d %s, want 404 notFound", code, again)
	}
	// A whole body of unknown length over the limit.
	loc = h.open(nil, "")
	req, _ := http.NewRequest("PUT", loc, struct{ *bytes.Reader }{bytes.NewReader(pattern(max + 1))}) // hides the length
	resp, err := h.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked body of %d bytes: %d, want 413", max+1, resp.StatusCode)
	}
	if n := len(h.uploads()); n != 1 {
		t.Errorf("%d uploads finished, want only the one at the limit", n)
	}
}

func TestResumableCancelExpireAndWrongPath(t *testing.T) {
	h := newHarness(t, harnessOptions{opts: Options{SessionTTL: time.Hour}})
	loc := h.open(nil, "")
	h.do("PUT", loc, chunkHeader(0, u-1, "*"), pattern(u))
	if code, _, body := h.do("DELETE", loc, nil, nil); code != 499 || googleReason(t, body) != "uploadCancelled" {
		t.Fatalf("cancel: %d %s", code, body)
	}
	if code, _, _ := h.do("PUT", loc, map[string]string{"Content-Range": fmt.Sprintf("bytes */%d", u)}, nil); code != 404 {
		t.Errorf("cancelled session: %d, want 404", code)
	}

	loc = h.open(nil, "")
	h.do("PUT", loc, chunkHeader(0, u-1, "*"), pattern(u))
	h.advance(time.Hour + time.Second)
	if code, _, body := h.do("PUT", loc, chunkHeader(u, u+9, fmt.Sprint(u+10)), pattern(u + 10)[u:]); code != 404 || googleReason(t, body) != "notFound" {
		t.Errorf("expired session: %d %s, want 404 notFound", code, body)
	}

	loc = h.open(nil, "")
	wrong := strings.Replace(loc, "/messages/send", "/drafts", 1)
	if code, _, body := h.do("PUT", wrong, chunkHeader(0, 0, "1"), []byte("x")); code != 404 || googleReason(t, body) != "notFound" {
		t.Errorf("session URL used on another method's path: %d %s, want 404 notFound", code, body)
	}
	if code, _, _ := h.do("PUT", strings.Replace(loc, "upload_id=", "upload_id=x", 1), nil, nil); code != 404 {
		t.Errorf("unknown upload_id: %d, want 404", code)
	}
	if n := len(h.uploads()); n != 0 {
		t.Errorf("%d uploads finished from sessions never finalized", n)
	}
}

func TestResumableSessionLimit(t *testing.T) {
	h := newHarness(t, harnessOptions{opts: Options{MaxSessions: 2, SessionTTL: time.Minute}})
	h.open(nil, "")
	h.open(nil, "")
	code, _, body := h.do("POST", h.url("uploadType=resumable"), map[string]string{"Content-Type": "application/json"}, nil)
	if code != 429 || googleReason(t, body) != "rateLimitExceeded" {
		t.Fatalf("third session: %d %s, want 429", code, body)
	}
	h.advance(2 * time.Minute)
	h.open(nil, "") // the expired two were swept
}

// Finished sessions do not take the room of open ones; the newest
// finished ones still answer a resent last chunk.
func TestFinishedSessionsLeaveRoom(t *testing.T) {
	h := newHarness(t, harnessOptions{opts: Options{MaxSessions: 2, SessionTTL: time.Minute}})
	var locs []string
	var answers [][]byte
	for i := range 3 {
		loc := h.open(nil, `{"n":1}`)
		code, _, body := h.do("PUT", loc, chunkHeader(0, 0, "1"), []byte{byte(i)})
		if code != 200 {
			t.Fatalf("upload %d: %d %s", i+1, code, body)
		}
		locs, answers = append(locs, loc), append(answers, body)
	}
	for i, loc := range locs[1:] {
		code, _, body := h.do("PUT", loc, chunkHeader(0, 0, "1"), []byte{byte(i + 1)})
		if code != 200 || !bytes.Equal(body, answers[i+1]) {
			t.Errorf("finished session %d resent: %d %s, want its first answer %s", i+2, code, body, answers[i+1])
		}
	}
	if code, _, _ := h.do("PUT", locs[0], chunkHeader(0, 0, "1"), []byte{0}); code != 404 {
		t.Errorf("oldest of three finished sessions with room for two: %d, want 404", code)
	}
	h.open(nil, "")
	h.open(nil, "")
	code, _, body := h.do("POST", h.url("uploadType=resumable"), map[string]string{"Content-Type": "application/json"}, nil)
	if code != 429 || googleReason(t, body) != "rateLimitExceeded" {
		t.Fatalf("third open session beside two finished ones: %d %s, want 429", code, body)
	}
	if n := len(h.uploads()); n != 3 {
		t.Errorf("%d uploads finished, want 3", n)
	}
}

func TestResumableChunkNeedsNoBearer(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	loc := h.open(nil, "")
	req, _ := http.NewRequest("PUT", loc, bytes.NewReader([]byte("x")))
	req.Header.Set("Content-Range", "bytes 0-0/1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&got)
	if resp.StatusCode != 200 || got["size"] != float64(1) {
		t.Fatalf("chunk without bearer: %d %v", resp.StatusCode, got)
	}
}

// TestFourXXEndsTheSession: Google's guide says a 4xx during a resumable
// upload means the session has expired. An injected 4xx on a chunk, or
// an API's 4xx refusal of the complete upload, ends it: the status query
// after it gets 404 and nothing is made. A 429 (which Google's clients
// retry on the same session) leaves it open unless the fault says
// end_session; a 5xx always does.
func TestFourXXEndsTheSession(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault *core.Fault
		admit int // Admit's refusal of the complete upload, 0 for none
		end   bool
		ends  bool
	}{
		{name: "injected 400", fault: &core.Fault{Status: 400}, ends: true},
		{name: "injected 403", fault: &core.Fault{Status: 403, Reason: "rateLimitExceeded"}, ends: true},
		{name: "injected 404", fault: &core.Fault{Status: 404}, ends: true},
		{name: "injected 429", fault: &core.Fault{Status: 429}},
		{name: "injected 429 that ends the session", fault: &core.Fault{Status: 429, EndSession: true}, ends: true},
		{name: "injected 503", fault: &core.Fault{Status: 503}},
		{name: "refused complete upload, 403", admit: 403, ends: true},
		{name: "refused complete upload, 429", admit: 429},
		{name: "refused complete upload, 429 that ends the session", admit: 429, end: true, ends: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused := false
			h := newHarness(t, harnessOptions{admit: func(context.Context, Upload) (Result, bool) {
				if tc.admit == 0 || refused {
					return Result{}, true
				}
				refused = true
				res := ErrorResult(tc.admit, "rateLimitExceeded", "Rate Limit Exceeded")
				res.EndSession = tc.end
				return res, false
			}})
			loc := h.open(nil, "")
			h.do("PUT", loc, chunkHeader(0, u-1, "*"), pattern(u))
			last := chunkHeader(u, u+9, fmt.Sprint(u+10))
			if tc.fault != nil {
				f := *tc.fault
				f.PathPrefix = "/upload/"
				if err := h.faults.Add(f); err != nil {
					t.Fatal(err)
				}
			}
			if code, _, body := h.do("PUT", loc, last, pattern(u + 10)[u:]); code < 400 {
				t.Fatalf("the last chunk: %d %s, want the error", code, body)
			}
			code, _, body := h.do("PUT", loc, map[string]string{"Content-Range": "bytes */*"}, nil)
			switch {
			case tc.ends && (code != 404 || googleReason(t, body) != "notFound"):
				t.Errorf("status query: %d %s, want 404 notFound: the session ended", code, body)
			case !tc.ends && code != 308 && code != 200:
				// 200: the session held every byte, so asking completed it.
				t.Errorf("status query: %d %s, want 308 or 200: the session goes on", code, body)
			}
			if tc.ends {
				if n := len(h.uploads()); n != 0 {
					t.Errorf("%d uploads finished from an ended session", n)
				}
				return
			}
			if code == 200 {
				if n := len(h.uploads()); n != 1 {
					t.Errorf("%d uploads after the status query completed it, want 1", n)
				}
				return
			}
			if code, _, body := h.do("PUT", loc, last, pattern(u + 10)[u:]); code != 200 || len(h.uploads()) != 1 {
				t.Errorf("the last chunk again: %d %s, %d uploads; want it to complete", code, body, len(h.uploads()))
			}
		})
	}
}
