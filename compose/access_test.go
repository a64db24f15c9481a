package compose_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/account/accounttest"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/refusal"
)

// outsider has a Google account (an emulator user) outside example.com.
const outsider = "bob@other.org"

// appClient is the OAuth client of the emulator's test tokens: a file it
// "created" is one drive.file lets drivemail share.
const appClient = "emulator-test"

// Today's default grant: Drive read-only plus drive.file (for uploads),
// and sending.
var defaultScopes = []string{emutest.ScopeDriveReadonly, emutest.ScopeDriveFile, emutest.ScopeGmailSend, emutest.ScopeGmailCompose}

// sharingCalls counts the Drive permissions calls a send makes.
type sharingCalls struct {
	base          http.RoundTripper
	mu            sync.Mutex
	lists, create int
}

func (c *sharingCalls) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/permissions") {
		c.mu.Lock()
		if r.Method == http.MethodPost {
			c.create++
		} else {
			c.lists++
		}
		c.mu.Unlock()
	}
	return c.base.RoundTrip(r)
}

func (c *sharingCalls) counts() (lists, create int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists, c.create
}

// sharer is the user's account with scopes, its permissions calls
// counted.
func (e *env) sharer(scopes ...string) (*account.Account, *sharingCalls) {
	e.Emu.AddUser(outsider)
	hc := e.Client(user, scopes...)
	calls := &sharingCalls{base: hc.Transport}
	u := identity.User{ID: user, Email: user, GoogleScopes: scopes}
	return accounttest.Over(u, &http.Client{Transport: calls}, e.google), calls
}

func (e *env) sendFrom(acct *account.Account, req compose.Request, draft bool) (compose.Result, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return e.svc.Send(ctx, acct, req, compose.Options{Draft: draft})
}

// linkTo is a message to rcpts with f as a link, shared as share asks.
func linkTo(f drivesvc.File, share string, rcpts ...string) compose.Request {
	return compose.Request{To: rcpts, Subject: "The plan", BodyText: "Here it is.",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID), Share: share}}}}
}

// refusedAs fails the test unless err is a refusal of kind that says
// every one of want.
func refusedAs(t *testing.T, err error, kind string, want ...string) {
	t.Helper()
	r, ok := refusal.As(err)
	if !ok || string(r.Kind) != kind {
		t.Fatalf("err = %v (kind %q), want a %s refusal", err, refusal.KindOf(err), kind)
	}
	for _, w := range want {
		if !strings.Contains(r.Text, w) {
			t.Errorf("refusal %q does not say %q", r.Text, w)
		}
	}
}

// TestALinkOutsidersCannotOpen: a Doc shared with example.com, sent as a
// link to someone outside it, is refused without share, naming who
// cannot open which file and the ways out, with nothing sent and nothing
// shared; with share "reader" the outsider gets a reader permission (no
// notification) and the message goes, its result naming who got access;
// the same send again shares nothing twice. The log lines count what
// was shared, and name no one.
func TestALinkOutsidersCannotOpen(t *testing.T) {
	e, logs := newLoggedEnv(t)
	acct, calls := e.sharer(defaultScopes...)
	doc := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x", ClientID: appClient,
		Permissions: []drivesvc.Permission{{Type: "domain", Role: "reader", Domain: "example.com"}}})
	before := e.Emu.Stats()
	permsBefore, _ := e.Emu.Drive().Permissions(doc.ID)

	for _, draft := range []bool{false, true} {
		_, err := e.sendFrom(acct, linkTo(doc, "", "carol@example.com", outsider), draft)
		nothing := map[bool]string{false: "Nothing was sent.", true: "Nothing was saved."}[draft]
		refusedAs(t, err, "link_not_open", `Attachment 1 ("Plan") goes as a link that bob@other.org cannot open`,
			`add "share": "reader" (or "commenter")`, `attach a copy with "as" (for example "as": "pdf")`, nothing)
		if strings.Contains(err.Error(), "carol@example.com") {
			t.Errorf("refusal names carol, whose domain the file is shared with: %v", err)
		}
	}
	unchanged(t, before, e.Emu.Stats())
	if st := e.Emu.Stats(); st.PermissionsCreated != 0 {
		t.Errorf("permissions created = %d after a refusal, want 0", st.PermissionsCreated)
	}
	if perms, _ := e.Emu.Drive().Permissions(doc.ID); !slices.Equal(perms, permsBefore) {
		t.Errorf("the refusals changed the file's sharing: %v → %v", permsBefore, perms)
	}
	if lists, _ := calls.counts(); lists != 2 {
		t.Errorf("permissions.list calls = %d for two refused sends, want one each", lists)
	}
	if !strings.Contains(logs.String(), "refusal=link_not_open") {
		t.Errorf("no refusal=link_not_open line:\n%s", logs.String())
	}
	logs.Reset()

	res, err := e.sendFrom(acct, linkTo(doc, "reader", "carol@example.com", outsider), false)
	if err != nil {
		t.Fatalf("send with share: %v", err)
	}
	if len(res.Linked) != 1 || !slices.Equal(res.Linked[0].SharedWith, []string{outsider}) || res.Linked[0].SharedRole != "reader" ||
		res.Linked[0].Access != compose.AccessOpen {
		t.Errorf("linked = %+v, want shared with %s as reader, access open", res.Linked, outsider)
	}
	perms, _ := e.Emu.Drive().Permissions(doc.ID)
	if !slices.ContainsFunc(perms, func(p drivesvc.Permission) bool {
		return p.Type == "user" && p.Role == "reader" && p.EmailAddress == outsider
	}) {
		t.Errorf("the file's permissions %v lack %s as reader", perms, outsider)
	}
	if st := e.Emu.Stats(); st.PermissionsCreated != 1 || st.MessagesSent != 1 {
		t.Errorf("permissions created %d, messages sent %d; want 1 and 1", st.PermissionsCreated, st.MessagesSent)
	}
	if line := logs.String(); !strings.Contains(line, "shared=1") || strings.Contains(line, outsider) {
		t.Errorf("the message sent line should count one share and name no one:\n%s", line)
	}
	if _, root := goParse(t, e.Message(user, res.ID)); !strings.Contains(string(root.leaves()[0].Body), res.Linked[0].URL) {
		t.Errorf("the message lacks the link %s", res.Linked[0].URL)
	}
	// The outsider now opens it with their own token.
	bob, err := drive.New(context.Background(), e.Client(outsider, emutest.ScopeDriveReadonly), e.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Lookup(context.Background(), drive.Ref{ID: doc.ID}); err != nil {
		t.Errorf("the outsider cannot open the shared file: %v", err)
	}

	res, err = e.sendFrom(acct, linkTo(doc, "reader", outsider), false)
	if err != nil || len(res.Linked[0].SharedWith) != 0 {
		t.Fatalf("second send: %v, linked %+v; want it sent, sharing with nobody", err, res.Linked)
	}
	if st := e.Emu.Stats(); st.PermissionsCreated != 1 {
		t.Errorf("permissions created = %d after the second send, want still 1", st.PermissionsCreated)
	}
}

// TestLinksTheRecipientsCanOpen: a domain-shared file to someone of that
// domain, a link-shared file to anyone, a file shared with the recipient
// (any case), and a file sent to its owner go without share: one
// permissions.list each, nothing shared.
func TestLinksTheRecipientsCanOpen(t *testing.T) {
	e := newEnv(t, compose.Config{})
	acct, calls := e.sharer(defaultScopes...)
	domain := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x",
		Permissions: []drivesvc.Permission{{Type: "domain", Role: "commenter", Domain: "example.com"}}})
	anyone := e.Put(user, drivesvc.FileSpec{Name: "Q3 Report.pdf", Content: []byte("%PDF-1.4"), LinkShared: true})
	writer := e.Put(user, drivesvc.FileSpec{Name: "Notes", Kind: drivesvc.KindDoc, DocText: "x",
		Permissions: []drivesvc.Permission{{Type: "user", Role: "writer", EmailAddress: "priya@example.org"}}})
	keyed := e.Put(user, drivesvc.FileSpec{Name: "Keyed", Kind: drivesvc.KindDoc, DocText: "x", LinkShared: true, ResourceKey: drivesvc.NewResourceKey()})
	tests := []struct {
		name string
		att  compose.DriveFile
		to   string
	}{
		{"the recipient's domain", compose.DriveFile{Handle: handle.MustParse(domain.ID)}, "Carol <carol@EXAMPLE.com>"},
		{"anyone with the link, link: true", compose.DriveFile{Handle: handle.MustParse(anyone.ID), Link: true}, outsider},
		{"the recipient's address", compose.DriveFile{Handle: handle.MustParse(writer.ID)}, "Priya@example.org"},
		{"its owner", compose.DriveFile{Handle: handle.MustParse(writer.ID)}, user},
		{"a resource key", compose.DriveFile{Handle: handle.MustParse(keyed.ID)}, outsider},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lists0, _ := calls.counts()
			res, err := e.sendFrom(acct, compose.Request{To: []string{tt.to}, Subject: "s", BodyText: "hi",
				Attachments: []compose.Attachment{{Source: tt.att}}}, false)
			if err != nil {
				t.Fatalf("send: %v", err)
			}
			if l := res.Linked; len(l) != 1 || l[0].Access != compose.AccessOpen || l[0].SharedWith != nil || l[0].AccessNote != "" {
				t.Errorf("linked = %+v, want one link, access open, shared with nobody", l)
			}
			if lists, create := calls.counts(); lists-lists0 != 1 || create != 0 {
				t.Errorf("permissions calls: %d lists, %d creates; want 1 list and no create", lists-lists0, create)
			}
		})
	}
	res, err := e.sendFrom(acct, compose.Request{To: []string{outsider}, Subject: "s", BodyText: "hi",
		Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(keyed.ID)}}}}, false)
	if err != nil || !strings.Contains(res.Linked[0].URL, "resourcekey="+keyed.ResourceKey) {
		t.Errorf("a link-shared file's link %v (%v) does not carry its resource key", res.Linked, err)
	}
}

// TestAFileTheUserMayNotShareGoesUnchecked: a file shared with the user
// as a reader shows them neither its sharing nor canShare; it goes
// unchecked, with no permissions call and a result that says the check
// could not be made. The same when permissions.list answers 403 for a
// file Drive said they could share. share on such a file is refused.
func TestAFileTheUserMayNotShareGoesUnchecked(t *testing.T) {
	e := newEnv(t, compose.Config{})
	acct, calls := e.sharer(defaultScopes...)
	theirs := e.Put("dan@example.net", drivesvc.FileSpec{Name: "Their plan", Kind: drivesvc.KindDoc, DocText: "x", SharedWith: []string{user}})
	res, err := e.sendFrom(acct, linkTo(theirs, "", outsider), false)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	if l := res.Linked[0]; l.Access != compose.AccessUnchecked || !strings.Contains(l.AccessNote, "could not check that the recipients can open it") {
		t.Errorf("linked = %+v, want access unchecked with a note that says so", l)
	}
	if lists, _ := calls.counts(); lists != 0 {
		t.Errorf("permissions.list calls = %d for a file the user may not share, want 0", lists)
	}

	mine := e.Put(user, drivesvc.FileSpec{Name: "Mine", Kind: drivesvc.KindDoc, DocText: "x"})
	e.Inject(emuFault403("/drive/v3/files/" + mine.ID + "/permissions"))
	res, err = e.sendFrom(acct, linkTo(mine, "", outsider), false)
	if err != nil || res.Linked[0].Access != compose.AccessUnchecked {
		t.Fatalf("send with permissions.list refused: %v, %+v; want it sent unchecked", err, res.Linked)
	}

	before := e.Emu.Stats()
	_, err = e.sendFrom(acct, linkTo(theirs, "reader", outsider), false)
	refusedAs(t, err, "share_not_allowed", "may not change the file's sharing", `attach a copy with "as"`, `leave out "share"`, "Nothing was sent.")
	unchanged(t, before, e.Emu.Stats())
}

// TestReadOnlyDriveCannotShare: with drive.readonly alone, or for a file
// drivemail neither created nor was picked for, a share option is
// refused before anything is shared or sent, and the refusal of a link
// outsiders cannot open offers Drive's Share button and a copy, not a
// share option that could not work.
func TestReadOnlyDriveCannotShare(t *testing.T) {
	e := newEnv(t, compose.Config{})
	readonly, _ := e.sharer(emutest.ScopeDriveReadonly, emutest.ScopeGmailSend)
	withFile, _ := e.sharer(defaultScopes...)
	app := e.Put(user, drivesvc.FileSpec{Name: "Made by drivemail", Kind: drivesvc.KindDoc, DocText: "x", ClientID: appClient})
	found := e.Put(user, drivesvc.FileSpec{Name: "Found by search", Kind: drivesvc.KindDoc, DocText: "x"})
	tests := []struct {
		name  string
		acct  *account.Account
		f     drivesvc.File
		share string
		kind  string
		why   string
	}{
		{"read-only, share", readonly, app, "reader", "share_not_allowed", "lets drivemail read Drive, not change its sharing"},
		{"read-only, no share", readonly, app, "", "link_not_open", "lets drivemail read Drive, not change its sharing"},
		{"drive.file, a file drivemail did not make", withFile, found, "commenter", "share_not_allowed", "created or the user picked"},
		{"drive.file, no share", withFile, found, "", "link_not_open", "created or the user picked"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.Emu.Stats()
			_, err := e.sendFrom(tt.acct, linkTo(tt.f, tt.share, outsider), false)
			refusedAs(t, err, tt.kind, tt.why, "Google Drive", `attach a copy with "as"`, "Nothing was sent.")
			if strings.Contains(err.Error(), `add "share"`) {
				t.Errorf("the refusal offers a share option that cannot work: %v", err)
			}
			unchanged(t, before, e.Emu.Stats())
			if st := e.Emu.Stats(); st.PermissionsCreated != 0 {
				t.Errorf("permissions created = %d, want 0", st.PermissionsCreated)
			}
		})
	}
}
