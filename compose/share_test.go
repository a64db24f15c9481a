package compose_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/handle"
)

// emuFault403 answers GET path with Drive's 403 to a user who may not
// see a file's sharing.
func emuFault403(path string) emulator.Fault {
	return emulator.Fault{Method: "GET", PathPrefix: path, Status: 403, Reason: "insufficientFilePermissions"}
}

// people are n emulator users of other.org.
func (e *env) people(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("p%03d@other.org", i)
		e.Emu.AddUser(out[i])
	}
	return out
}

// TestShareGrantsAreBounded: share options that would add MaxShareGrants
// permissions (recipients lacking access × linked files) are carried
// out; one more is refused before anything is shared or sent.
func TestShareGrantsAreBounded(t *testing.T) {
	e := newEnv(t, compose.Config{})
	acct, _ := e.sharer(defaultScopes...)
	docs := func(n int) []compose.Attachment {
		var out []compose.Attachment
		for i := range n {
			d := e.Put(user, drivesvc.FileSpec{Name: fmt.Sprintf("Doc %d", i), Kind: drivesvc.KindDoc, DocText: "x", ClientID: appClient})
			out = append(out, compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(d.ID), Share: "reader"}})
		}
		return out
	}
	const files = 5
	at := compose.Request{To: e.people(compose.MaxShareGrants / files), Subject: "s", BodyText: "hi", Attachments: docs(files)}
	res, err := e.sendFrom(acct, at, false)
	if err != nil {
		t.Fatalf("%d grants: %v", compose.MaxShareGrants, err)
	}
	if st := e.Emu.Stats(); st.PermissionsCreated != compose.MaxShareGrants || len(res.Linked) != files || len(res.Linked[files-1].SharedWith) != compose.MaxShareGrants/files {
		t.Errorf("permissions created %d, linked %+v; want %d, every file shared with every recipient", st.PermissionsCreated, res.Linked, compose.MaxShareGrants)
	}

	// 3 files × 17 people = 51.
	past := compose.Request{To: e.people(17), Subject: "s", BodyText: "hi", Attachments: docs(3)}
	before := e.Emu.Stats()
	_, err = e.sendFrom(acct, past, false)
	refusedAs(t, err, "too_many_shares", "would give 51 people access", fmt.Sprintf("at most %d", compose.MaxShareGrants), "Nothing was sent.")
	unchanged(t, before, e.Emu.Stats())
	if st := e.Emu.Stats(); st.PermissionsCreated != before.PermissionsCreated {
		t.Errorf("permissions created %d → %d by a refused send", before.PermissionsCreated, st.PermissionsCreated)
	}
}

// TestPermissionPagesAreBounded: a file shared with exactly the 400
// people and groups drivemail reads (4 pages) is checked whole, the last
// of them found; with one more, a recipient past the pages read is not
// known either way: the link goes unchecked, saying why, and a share
// option is refused rather than risk changing someone's role.
func TestPermissionPagesAreBounded(t *testing.T) {
	e := newEnv(t, compose.Config{})
	acct, calls := e.sharer(defaultScopes...)
	limit := compose.MaxPermissionPages * drive.PermissionPageSize
	wide := func(n int) drivesvc.File {
		// The owner's permission comes first: n in all, the last one the recipient's.
		var perms []drivesvc.Permission
		for i := range n - 2 {
			perms = append(perms, drivesvc.Permission{Type: "user", Role: "reader", EmailAddress: fmt.Sprintf("q%03d@example.net", i)})
		}
		perms = append(perms, drivesvc.Permission{Type: "user", Role: "reader", EmailAddress: outsider})
		return e.Put(user, drivesvc.FileSpec{Name: "Wide", Kind: drivesvc.KindDoc, DocText: "x", ClientID: appClient, Permissions: perms})
	}

	atEdge := wide(limit)
	if perms, _ := e.Emu.Drive().Permissions(atEdge.ID); len(perms) != limit || perms[limit-1].EmailAddress != outsider {
		t.Fatalf("the file has %d permissions, want %d with %s last", len(perms), limit, outsider)
	}
	res, err := e.sendFrom(acct, linkTo(atEdge, "", outsider), false)
	if err != nil || res.Linked[0].Access != compose.AccessOpen {
		t.Fatalf("at the edge: %v, %+v; want it sent, access open", err, res.Linked)
	}
	if lists, _ := calls.counts(); lists != compose.MaxPermissionPages {
		t.Errorf("permissions.list calls = %d, want %d pages", lists, compose.MaxPermissionPages)
	}

	past := wide(limit + 1)
	res, err = e.sendFrom(acct, linkTo(past, "", outsider), false)
	if err != nil {
		t.Fatalf("past the edge: %v", err)
	}
	if l := res.Linked[0]; l.Access != compose.AccessUnchecked || !strings.Contains(l.AccessNote, fmt.Sprintf("more than the %d", limit)) {
		t.Errorf("past the edge: linked %+v, want unchecked, saying the list is longer than %d", l, limit)
	}
	if lists, _ := calls.counts(); lists != 2*compose.MaxPermissionPages {
		t.Errorf("permissions.list calls = %d, want %d pages per file", lists, compose.MaxPermissionPages)
	}
	before := e.Emu.Stats()
	_, err = e.sendFrom(acct, linkTo(past, "reader", outsider), false)
	refusedAs(t, err, "share_unknown", fmt.Sprintf("more than the %d", limit), "Nothing was sent.")
	unchanged(t, before, e.Emu.Stats())
}

// TestShareWithAnAddressWithoutAGoogleAccount: Drive will not share with
// an address that has no Google account unless it emails an invitation,
// which drivemail does not ask for; nor does it widen the file to
// "anyone with the link" unasked. The send is refused, naming that
// address and the ways out, and saying who got access before it: that
// access stays, so the same send again shares with nobody twice.
func TestShareWithAnAddressWithoutAGoogleAccount(t *testing.T) {
	e := newEnv(t, compose.Config{})
	acct, _ := e.sharer(defaultScopes...)
	doc := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x", ClientID: appClient})
	const stranger = "nobody@nowhere.example"
	req := linkTo(doc, "commenter", outsider, stranger)
	before := e.Emu.Stats()
	_, err := e.sendFrom(acct, req, false)
	refusedAs(t, err, "share_refused", "would not share attachment 1 (\"Plan\") with nobody@nowhere.example", "no Google account",
		`attach a copy with "as"`, `"Anyone with the link"`, "Nothing was sent.",
		"Before that, drivemail gave access: bob@other.org to attachment 1 (\"Plan\") (commenter). That access stays")
	outboxUnchanged(t, before, e.Emu.Stats())
	perms, _ := e.Emu.Drive().Permissions(doc.ID)
	if !slices.ContainsFunc(perms, func(p drivesvc.Permission) bool { return p.EmailAddress == outsider && p.Role == "commenter" }) ||
		slices.ContainsFunc(perms, func(p drivesvc.Permission) bool { return p.Type == "anyone" || p.EmailAddress == stranger }) {
		t.Errorf("permissions %v: want %s as commenter, no stranger, no link sharing", perms, outsider)
	}
	created := e.Emu.Stats().PermissionsCreated
	_, err = e.sendFrom(acct, req, false)
	refusedAs(t, err, "share_refused", stranger)
	if strings.Contains(err.Error(), "Before that") || e.Emu.Stats().PermissionsCreated != created {
		t.Errorf("the second try shared again: %v", err)
	}
}

// TestASendThatFailsAfterSharingSaysWhoGotAccess: when Gmail refuses the
// message after drivemail shared its link, the refusal says so and who
// has access now.
func TestASendThatFailsAfterSharingSaysWhoGotAccess(t *testing.T) {
	e := newEnv(t, compose.Config{})
	acct, _ := e.sharer(defaultScopes...)
	doc := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x", ClientID: appClient})
	e.Inject(emulator.Fault{PathPrefix: "/upload/gmail/v1/users/me/messages/send", Status: 400, Times: 5})
	before := e.Emu.Stats()
	_, err := e.sendFrom(acct, linkTo(doc, "reader", outsider), false)
	refusedAs(t, err, "gmail_rejected", "Before that, drivemail gave access: bob@other.org to attachment 1 (\"Plan\") (reader)")
	outboxUnchanged(t, before, e.Emu.Stats())
	if e.Emu.Stats().PermissionsCreated != 1 {
		t.Errorf("permissions created = %d, want 1", e.Emu.Stats().PermissionsCreated)
	}
}

// TestShareOptionsOutOfPlace: share takes reader or commenter, on a file
// that goes as a link; each mistake is refused before any Google call
// can share anything.
func TestShareOptionsOutOfPlace(t *testing.T) {
	e := newEnv(t, compose.Config{})
	acct, calls := e.sharer(defaultScopes...)
	doc := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x", ClientID: appClient})
	pdf := e.Put(user, drivesvc.FileSpec{Name: "a.pdf", Content: []byte("%PDF"), ClientID: appClient})
	tests := []struct {
		name string
		att  compose.DriveFile
		want string
	}{
		{"writer", compose.DriveFile{Handle: handle.MustParse(doc.ID), Share: "writer"}, `"share" is "writer"`},
		{"with as", compose.DriveFile{Handle: handle.MustParse(doc.ID), Share: "reader", As: "pdf"}, `both "share" and "as"`},
		{"an attached file", compose.DriveFile{Handle: handle.MustParse(pdf.ID), Share: "reader"}, `is attached, not sent as a link, so "share" does not apply`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.Emu.Stats()
			_, err := e.sendFrom(acct, compose.Request{To: []string{outsider}, Subject: "s", BodyText: "hi",
				Attachments: []compose.Attachment{{Source: tt.att}}}, false)
			refusedAs(t, err, "bad_option", tt.want)
			unchanged(t, before, e.Emu.Stats())
		})
	}
	if lists, create := calls.counts(); lists != 0 || create != 0 {
		t.Errorf("permissions calls %d lists, %d creates; want none", lists, create)
	}
}
