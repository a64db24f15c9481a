package pick_test

import (
	"net/http"
	"strings"
	"testing"
)

// The page is framed by no one, unless it was opened inside the pick view
// (?in=view): then its landing, the Picker its button opens (the form
// posts to the same URL) and its problems may be framed by any page, and
// nothing else of its policy changes.
func TestOnlyThePickViewFramesThePage(t *testing.T) {
	h := newHarness(t)
	plain := h.link(ann)
	if got := h.do(http.MethodGet, plain, "", ""); got.header.Get("X-Frame-Options") != "DENY" ||
		!strings.Contains(got.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("a link opened in a tab: %v", got.header)
	}
	framed := h.link(ann) + "?in=view"
	landing := h.do(http.MethodGet, framed, "", "")
	picker := h.open(framed)
	used := h.open(framed) // spent: a problem page
	for name, a := range map[string]answer{"landing": landing, "picker": picker, "problem": used} {
		csp := a.header.Get("Content-Security-Policy")
		if a.header.Get("X-Frame-Options") != "" || !strings.HasSuffix(csp, "frame-ancestors *") || strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("%s in the view: X-Frame-Options %q, CSP %q", name, a.header.Get("X-Frame-Options"), csp)
		}
	}
	if picker.status != http.StatusOK || h.config(picker).Token == "" || used.status != http.StatusGone {
		t.Errorf("framed, the page works as in a tab: picker %d, again %d", picker.status, used.status)
	}
	if !strings.Contains(picker.header.Get("Content-Security-Policy"), "script-src 'nonce-") {
		t.Error("framed, the Picker page lost its script policy")
	}
}
