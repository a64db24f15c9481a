package oauth_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/oauth/googleauth"
)

// restricted are the scopes drivemail may ask for that Google classes
// restricted (docs/google-cloud-setup.md), and the broader ones that
// would cover them.
var restricted = []string{googleauth.ScopeDriveReadonly, "https://www.googleapis.com/auth/drive",
	googleauth.ScopeGmailReadonly, googleauth.ScopeGmailCompose, "https://www.googleapis.com/auth/gmail.modify", "https://mail.google.com/"}

// TestFileModeAsksGoogleForNoRestrictedScope: with --drive-scope file a
// whole sign-in asks Google, as the emulator recorded the grant, for
// drive.file and gmail.send with openid and email, and no restricted
// scope; the consent page says drivemail opens only the files picked.
func TestFileModeAsksGoogleForNoRestrictedScope(t *testing.T) {
	h := newHarness(t, options{driveFile: true})
	a := h.newAuthRequest(h.publicClient())
	b := newBrowser(t)
	consent := b.get(a.url(h.base))
	if !strings.Contains(consent.body, "Open only the Google Drive files you pick") || strings.Contains(consent.body, "Search and read the files") {
		t.Errorf("the consent page does not say drivemail sees only the files picked: %.2000s", consent.body)
	}
	back := b.signIn(h, a.url(h.base))
	if back.Query().Get("code") == "" {
		t.Fatalf("sign-in ended at %s", back)
	}
	got := h.google.emu.Authorizations()
	if len(got) != 1 {
		t.Fatalf("the emulator recorded %d authorizations, want 1", len(got))
	}
	want := []string{"openid", "https://www.googleapis.com/auth/userinfo.email", googleauth.ScopeGmailSend, googleauth.ScopeDriveFile}
	if asked := got[0].Asked; !slices.Equal(asked, want) {
		t.Errorf("drivemail asked Google for %v, want %v", asked, want)
	}
	for _, sc := range append(got[0].Asked, got[0].Granted...) {
		if slices.Contains(restricted, sc) {
			t.Errorf("file mode asked for or was granted the restricted scope %s", sc)
		}
	}
	if got[0].ClientID != "drivemail-test.apps.googleusercontent.com" || got[0].Email != "demo@example.com" {
		t.Errorf("recorded %+v", got[0])
	}
}

// TestReadonlyModeAsksForDriveReadonly: the default still asks for
// drive.readonly, the scope drive_search over the whole Drive needs.
func TestReadonlyModeAsksForDriveReadonly(t *testing.T) {
	h := newHarness(t, options{})
	h.authorize()
	got := h.google.emu.Authorizations()
	if len(got) != 1 || !slices.Contains(got[0].Asked, googleauth.ScopeDriveReadonly) {
		t.Errorf("readonly mode asked Google for %+v", got)
	}
}
