package pick_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/pick"
)

// TestPickThroughThePage: the link's landing spends nothing and shows no
// token; its button shows the Picker with a drive.file-only token; after
// the pick in the emulator's Picker the page's choice comes back as the
// files Drive names, and says to go back to the chat.
func TestPickThroughThePage(t *testing.T) {
	h := newHarness(t)
	link := h.link(ann)
	if !strings.HasPrefix(link, h.srv.URL+"/pick/p1.") {
		t.Fatalf("link %s, want BASE/pick/<ticket>", link)
	}
	landing := h.do(http.MethodGet, link, "", "")
	if landing.status != http.StatusOK || !strings.Contains(landing.body, `id="choose"`) || strings.Contains(landing.body, "ya29.") {
		t.Fatalf("landing: %d %.300s", landing.status, landing.body)
	}
	if csp := landing.header.Get("Content-Security-Policy"); strings.Contains(csp, "script-src") || !strings.Contains(csp, "form-action 'self'") {
		t.Errorf("landing CSP %q: want no script and a form to drivemail alone", csp)
	}
	if again := h.do(http.MethodGet, link, "", ""); again.status != http.StatusOK {
		t.Errorf("a second GET (a link preview, a reload) is %d: the landing must not spend the ticket", again.status)
	}

	page := h.open(link)
	c := h.config(page)
	if c.Token == "" || c.APIKey != h.env.Emu.APIKey() || c.AppID != h.env.Emu.ProjectNumber() || c.MaxFiles != maxFiles || c.PageKey == "" {
		t.Errorf("page config %+v", c)
	}
	if strings.Contains(page.header.Get("Location")+page.header.Get("Content-Location"), c.Token) {
		t.Error("the token is in a URL")
	}
	want := map[string]string{"Cache-Control": "no-store", "Referrer-Policy": "strict-origin", "X-Frame-Options": "DENY",
		"X-Content-Type-Options": "nosniff"}
	for k, v := range want {
		if got := page.header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	e := h.env.URL
	nonce := strings.TrimSuffix(strings.SplitN(strings.SplitN(page.header.Get("Content-Security-Policy"), "'nonce-", 2)[1], "'", 2)[0], "'")
	wantCSP := "default-src 'none'; script-src 'nonce-" + nonce + "' " + e + "; frame-src " + e + "; connect-src 'self'; img-src 'none'; " +
		"font-src 'none'; style-src 'unsafe-inline'; form-action " + e + "; base-uri 'none'; frame-ancestors 'none'"
	if got := page.header.Get("Content-Security-Policy"); got != wantCSP {
		t.Errorf("CSP\n got %s\nwant %s", got, wantCSP)
	}
	if !strings.Contains(page.body, `<script nonce="`+nonce+`" src="`+e+`/js/api.js"></script>`) {
		t.Errorf("the page does not load the Picker's script from the emulator: %.600s", page.body)
	}

	h.pickInEmulator(c, h.doc.ID, h.pdf.ID)
	status, got := h.post(link, c.PageKey, h.doc.ID, h.pdf.ID)
	if status != http.StatusOK || len(got.Files) != 2 || got.Missing != 0 || !strings.Contains(got.Say, "Go back to your chat") {
		t.Fatalf("choice: %d %+v", status, got)
	}
	names := []string{got.Files[0].Name, got.Files[1].Name}
	if !slices.Equal(names, []string{"Plan", "report.pdf"}) || got.Files[0].MimeType != "application/vnd.google-apps.document" {
		t.Errorf("files %+v, want Plan (a Doc) and report.pdf as Drive names them", got.Files)
	}
}

// TestChoiceTrustsOnlyDrive: ids the Picker did not grant this app (bob's
// file, a file never picked) count as missing, whatever the page claims.
func TestChoiceTrustsOnlyDrive(t *testing.T) {
	h := newHarness(t)
	link := h.link(ann)
	c := h.config(h.open(link))
	h.pickInEmulator(c, h.pdf.ID)
	status, got := h.post(link, c.PageKey, h.pdf.ID, h.doc.ID, h.bobs.ID)
	if status != http.StatusOK || len(got.Files) != 1 || got.Files[0].ID != h.pdf.ID || got.Missing != 2 {
		t.Fatalf("choice: %d %+v; want the PDF ready and two missing", status, got)
	}

	link = h.link(ann)
	c = h.config(h.open(link))
	if status, got := h.post(link, c.PageKey, h.bobs.ID); status != http.StatusOK || len(got.Files) != 0 || !strings.Contains(got.Say, "--google-app-id") {
		t.Errorf("a choice of nothing drivemail can open: %d %+v", status, got)
	}
}

// TestTicketIsSingleUse: the button spends the ticket; a second press
// (or a replay of the form) is refused, and so is a second choice.
func TestTicketIsSingleUse(t *testing.T) {
	h := newHarness(t)
	link := h.link(ann)
	c := h.config(h.open(link))
	if again := h.open(link); again.status != http.StatusGone || !strings.Contains(again.body, "opened already") || strings.Contains(again.body, "ya29.") {
		t.Errorf("second open: %d %.300s", again.status, again.body)
	}
	h.pickInEmulator(c, h.pdf.ID)
	if status, _ := h.post(link, c.PageKey, h.pdf.ID); status != http.StatusOK {
		t.Fatalf("first choice: %d", status)
	}
	if status, got := h.post(link, c.PageKey, h.pdf.ID); status != http.StatusConflict || got.Retry {
		t.Errorf("replayed choice: %d %+v, want 409", status, got)
	}
}

// TestTicketBelongsToItsUser: a ticket cannot be altered to name another
// user, a page key posts to its own ticket alone (not another user's,
// not another of the same user's), and a ticket is no page key.
func TestTicketBelongsToItsUser(t *testing.T) {
	h := newHarness(t)
	annLink, bobLink := h.link(ann), h.link(bob)
	// Any changed character of the sealed ticket is refused.
	i := len(annLink) - 5
	flipped := annLink[:i] + string("AB"[(strings.IndexByte("AB", annLink[i])+1)%2]) + annLink[i+1:]
	if a := h.open(flipped); a.status != http.StatusNotFound || !strings.Contains(a.body, "not one drivemail made") {
		t.Errorf("altered ticket: %d %.200s", a.status, a.body)
	}
	annKey := h.config(h.open(annLink)).PageKey
	bobKey := h.config(h.open(bobLink)).PageKey
	if status, got := h.post(annLink, bobKey, h.pdf.ID); status != http.StatusForbidden || len(got.Files) != 0 {
		t.Errorf("bob's page key on ann's ticket: %d %+v", status, got)
	}
	if status, _ := h.post(bobLink, annKey, h.pdf.ID); status != http.StatusForbidden {
		t.Errorf("ann's page key on bob's ticket: %d", status)
	}
	if status, _ := h.post(h.link(ann), annKey, h.pdf.ID); status != http.StatusForbidden {
		t.Errorf("ann's page key on another ticket of hers: %d", status)
	}
	ticket := strings.TrimPrefix(annLink, h.srv.URL+"/pick/")
	if status, _ := h.post(annLink, ticket, h.pdf.ID); status != http.StatusForbidden {
		t.Errorf("the ticket as its own page key: %d", status)
	}
	// A link sealed under another secret is not this server's.
	other := newHarnessWith(t, bytes.Repeat([]byte{0x43}, 32))
	foreign := strings.Replace(other.link(ann), other.srv.URL, h.srv.URL, 1)
	if other := h.open(foreign); other.status != http.StatusNotFound {
		t.Errorf("another server's ticket: %d", other.status)
	}
}

// TestTicketLivesItsMinutes: a link opens until its 15 minutes are up,
// not at them; the page it opened posts for its own 15 minutes.
func TestTicketLivesItsMinutes(t *testing.T) {
	h := newHarness(t)
	early, late := h.link(ann), h.link(ann)
	h.clock.Advance(pick.DefaultTTL - time.Second)
	c := h.config(h.open(early))
	h.clock.Advance(time.Second)
	if a := h.open(late); a.status != http.StatusGone || !strings.Contains(a.body, "expired") {
		t.Errorf("open at 15 minutes: %d %.200s", a.status, a.body)
	}
	if a := h.do(http.MethodGet, late, "", ""); a.status != http.StatusGone {
		t.Errorf("landing at 15 minutes: %d", a.status)
	}
	h.pickInEmulator(c, h.pdf.ID)
	h.clock.Advance(pick.DefaultPageTTL - 2*time.Second)
	if status, _ := h.post(early, c.PageKey, h.pdf.ID); status != http.StatusOK {
		t.Errorf("a choice inside the page's minutes, its ticket expired: %d", status)
	}

}

// TestPageKeyExpires: a page open past its minutes cannot post.
func TestPageKeyExpires(t *testing.T) {
	h := newHarness(t)
	link := h.link(ann)
	c := h.config(h.open(link))
	h.pickInEmulator(c, h.pdf.ID)
	h.clock.Advance(pick.DefaultPageTTL)
	if status, got := h.post(link, c.PageKey, h.pdf.ID); status != http.StatusGone || !strings.Contains(got.Error, "new link") {
		t.Errorf("choice at the page's 15 minutes: %d %+v", status, got)
	}
}

// TestChoiceLimits: none, the most, one past the most, a malformed id.
func TestChoiceLimits(t *testing.T) {
	h := newHarness(t)
	files := []string{h.pdf.ID, h.doc.ID, h.env.Put(ann, drivesvc.FileSpec{Name: "c.txt", Content: []byte("c")}).ID,
		h.env.Put(ann, drivesvc.FileSpec{Name: "d.txt", Content: []byte("d")}).ID}
	for _, tc := range []struct {
		name   string
		ids    []string
		status int
	}{
		{"none", nil, http.StatusBadRequest},
		{"one past the most", files, http.StatusBadRequest},
		{"a malformed id", []string{"../etc/passwd"}, http.StatusBadRequest},
		{"the most", files[:maxFiles], http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link := h.link(ann)
			c := h.config(h.open(link))
			h.pickInEmulator(c, files[:maxFiles]...)
			status, got := h.post(link, c.PageKey, tc.ids...)
			if status != tc.status {
				t.Fatalf("%d %+v, want %d", status, got, tc.status)
			}
			if status == http.StatusBadRequest && (!got.Retry || got.Error == "") {
				t.Errorf("a refused choice must say why and let the page try again: %+v", got)
			}
			if status == http.StatusOK && len(got.Files) != maxFiles {
				t.Errorf("%d files ready, want %d", len(got.Files), maxFiles)
			}
		})
	}
}

// TestNoPickerTokenSaysWhy: a user who must reconnect sees the sentence,
// and the ticket is spent all the same.
func TestNoPickerTokenSaysWhy(t *testing.T) {
	h := newHarness(t)
	h.tokens.fail = refusalFor
	a := h.open(h.link(ann))
	if a.status != http.StatusForbidden || !strings.Contains(a.body, refusalFor.Text) || strings.Contains(a.body, `id="config"`) {
		t.Errorf("%d %.300s", a.status, a.body)
	}
}
