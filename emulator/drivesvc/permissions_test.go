package drivesvc_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/api/drive/v3"

	"github.com/drivemail/drivemail/emulator/drivesvc"
)

const carol = "carol@example.org"

// TestPermissionsListAsTheRealClientReadsThem: permissions.list answers
// the owner and every permission a file has, with Google's default
// selection (kind, id, type, role) unless fields asks for more, and pages
// with pageSize and pageToken; File.permissions and canShare go with
// who may share.
func TestPermissionsListAsTheRealClientReadsThem(t *testing.T) {
	e := newEnv(t)
	f := e.put(ann, drivesvc.FileSpec{Name: "plan.pdf", Content: []byte("%PDF"), SharedWith: []string{bob}, LinkShared: true,
		Permissions: []drivesvc.Permission{{Type: "domain", Role: "commenter", Domain: "example.com"}}})
	svc := e.driveClient(e.token(ann))

	list, err := svc.Permissions.List(f.ID).Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Permissions) != 4 || list.NextPageToken != "" {
		t.Fatalf("%d permissions (next %q), want owner, user, anyone, domain", len(list.Permissions), list.NextPageToken)
	}
	if p := list.Permissions[0]; p.Role != "owner" || p.Type != "user" || p.Id == "" || p.EmailAddress != "" {
		t.Errorf("first permission %+v: want the owner, default fields only (no emailAddress)", p)
	}

	full, err := svc.Permissions.List(f.ID).Fields("permissions(id,type,role,emailAddress,domain,allowFileDiscovery),nextPageToken").Do()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range full.Permissions {
		got[p.Type+":"+p.EmailAddress+p.Domain] = p.Role
		if p.Type == "anyone" && (p.Id != "anyoneWithLink" || p.AllowFileDiscovery) {
			t.Errorf("link sharing %+v, want id anyoneWithLink, not discoverable", p)
		}
	}
	want := map[string]string{"user:" + ann: "owner", "user:" + bob: "reader", "anyone:": "reader", "domain:example.com": "commenter"}
	if len(got) != len(want) {
		t.Fatalf("permissions %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("permission %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}

	// Pages at the edge: 4 permissions in pages of 3, then 1; of 4, one page.
	p1, err := svc.Permissions.List(f.ID).PageSize(3).Do()
	if err != nil || len(p1.Permissions) != 3 || p1.NextPageToken == "" {
		t.Fatalf("page 1 of 3: %v %+v", err, p1)
	}
	p2, err := svc.Permissions.List(f.ID).PageSize(3).PageToken(p1.NextPageToken).Do()
	if err != nil || len(p2.Permissions) != 1 || p2.NextPageToken != "" {
		t.Fatalf("page 2 of 3: %v %+v", err, p2)
	}
	if one, err := svc.Permissions.List(f.ID).PageSize(4).Do(); err != nil || len(one.Permissions) != 4 || one.NextPageToken != "" {
		t.Errorf("a page of exactly 4: %v %+v", err, one)
	}
	_, err = svc.Permissions.List(f.ID).PageSize(101).Do()
	wantReason(t, err, 400, "invalid")
	if code, _, body := e.do("GET", e.srv.URL+"/drive/v3/files/"+f.ID+"/permissions?pageSize=0", e.token(ann), nil, nil); code != 400 {
		t.Errorf("pageSize=0: %d %s, want 400", code, body) // the Go client leaves a zero out
	}
	if _, err := svc.Permissions.List(f.ID).PageSize(100).Do(); err != nil {
		t.Errorf("pageSize 100: %v", err)
	}
	other := e.put(ann, drivesvc.FileSpec{Name: "other.txt", Content: []byte("x"), SharedWith: []string{bob, carol}})
	_, err = svc.Permissions.List(other.ID).PageSize(3).PageToken(p1.NextPageToken).Do()
	wantReason(t, err, 400, "invalid") // a token continues its own file's list only

	// File.permissions is there for the owner, capabilities.canShare too.
	got1, err := svc.Files.Get(f.ID).Fields("permissions(id,role),permissionIds,capabilities/canShare,shared").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(got1.Permissions) != 4 || len(got1.PermissionIds) != 4 || !got1.Capabilities.CanShare || !got1.Shared {
		t.Errorf("owner's view: %d permissions, ids %v, canShare %v, shared %v", len(got1.Permissions), got1.PermissionIds, got1.Capabilities.CanShare, got1.Shared)
	}
}

// TestReadersMayNotSeeSharing: a reader gets the file but neither its
// permissions (absent from File, 403 insufficientFilePermissions from
// permissions.list) nor canShare; a writer may share, as writersCanShare
// allows; someone the file is not shared with gets 404.
func TestReadersMayNotSeeSharing(t *testing.T) {
	e := newEnv(t)
	f := e.put(ann, drivesvc.FileSpec{Name: "plan.pdf", Content: []byte("%PDF"), SharedWith: []string{bob},
		Permissions: []drivesvc.Permission{{Type: "user", Role: "writer", EmailAddress: carol}}})
	reader := e.driveClient(e.token(bob))
	got, err := reader.Files.Get(f.ID).Fields("id,permissions,capabilities/canShare").Do()
	if err != nil {
		t.Fatal(err)
	}
	if got.Permissions != nil || got.Capabilities.CanShare {
		t.Errorf("reader's view: permissions %v, canShare %v; want neither", got.Permissions, got.Capabilities.CanShare)
	}
	_, err = reader.Permissions.List(f.ID).Do()
	ge := wantReason(t, err, 403, "insufficientFilePermissions")
	if !strings.Contains(ge.Message, f.ID) {
		t.Errorf("message %q does not name the file", ge.Message)
	}
	_, err = reader.Permissions.Create(f.ID, &drive.Permission{Type: "anyone", Role: "reader"}).Do()
	wantReason(t, err, 403, "insufficientFilePermissions")

	writer := e.driveClient(e.token(carol))
	if _, err := writer.Permissions.List(f.ID).Do(); err != nil {
		t.Errorf("a writer lists the sharing: %v", err)
	}
	_, err = e.driveClient(e.token("dave@example.net")).Permissions.List(f.ID).Do()
	wantReason(t, err, 404, "notFound")
}

// TestPermissionsCreate: drive and drive.file tokens share a file they
// may write; drive.readonly may not (403 insufficientPermissions); the new
// permission is the answer, shows in permissions.list, in the control
// route and in the stats, and lets its user in.
func TestPermissionsCreate(t *testing.T) {
	e := newEnv(t)
	e.emu.AddUser(bob)
	f := e.put(ann, drivesvc.FileSpec{Name: "plan.pdf", Content: []byte("%PDF"), ClientID: "app"})
	if _, err := e.driveClient(e.token(bob)).Files.Get(f.ID).Do(); err == nil {
		t.Fatal("bob reads the file before it is shared with him")
	}

	ro := e.driveClient(e.emu.AccessTokenFor(ann, "app", drivesvc.ScopeDriveReadonly))
	_, err := ro.Permissions.Create(f.ID, &drive.Permission{Type: "user", Role: "reader", EmailAddress: bob}).Do()
	wantReason(t, err, 403, "insufficientPermissions")

	app := e.driveClient(e.emu.AccessTokenFor(ann, "app", drivesvc.ScopeDriveFile))
	p, err := app.Permissions.Create(f.ID, &drive.Permission{Type: "user", Role: "reader", EmailAddress: bob}).
		SendNotificationEmail(false).Fields("id,type,role,emailAddress").Do()
	if err != nil {
		t.Fatalf("drive.file shares its own file: %v", err)
	}
	if p.Type != "user" || p.Role != "reader" || p.EmailAddress != bob || p.Id == "" {
		t.Errorf("created %+v", p)
	}
	if _, err := e.driveClient(e.token(bob)).Files.Get(f.ID).Do(); err != nil {
		t.Errorf("bob after the share: %v", err)
	}
	link, err := app.Permissions.Create(f.ID, &drive.Permission{Type: "anyone", Role: "commenter"}).Do()
	if err != nil || link.Id != "anyoneWithLink" || link.Role != "commenter" {
		t.Fatalf("anyone with the link: %v %+v", err, link)
	}
	if st := e.emu.Stats(); st.PermissionsCreated != 2 {
		t.Errorf("stats permissions_created = %d, want 2", st.PermissionsCreated)
	}
	code, _, body := e.do("GET", e.srv.URL+"/_emulator/files/"+f.ID, "", nil, nil)
	var ctl struct {
		Permissions []struct{ Type, Role, EmailAddress string } `json:"permissions"`
	}
	if err := json.Unmarshal(body, &ctl); code != 200 || err != nil || len(ctl.Permissions) != 3 {
		t.Errorf("control route: %d %s", code, body)
	}

	// drive.file cannot share a file its app did not create or open.
	theirs := e.put(ann, drivesvc.FileSpec{Name: "theirs.pdf", Content: []byte("%PDF")})
	_, err = app.Permissions.Create(theirs.ID, &drive.Permission{Type: "anyone", Role: "reader"}).Do()
	wantReason(t, err, 404, "notFound")
	both := e.driveClient(e.emu.AccessTokenFor(ann, "app", drivesvc.ScopeDriveFile, drivesvc.ScopeDriveReadonly))
	_, err = both.Permissions.Create(theirs.ID, &drive.Permission{Type: "anyone", Role: "reader"}).Do()
	wantReason(t, err, 403, "appNotAuthorizedToFile")
}

// TestPermissionsCreateRefusals: each request Drive refuses, with its
// status and reason, and nothing granted.
func TestPermissionsCreateRefusals(t *testing.T) {
	e := newEnv(t)
	e.emu.AddUser(bob)
	f := e.put(ann, drivesvc.FileSpec{Name: "plan.pdf", Content: []byte("%PDF")})
	svc := e.driveClient(e.token(ann))
	for _, tc := range []struct {
		name   string
		call   *drive.PermissionsCreateCall
		code   int
		reason string
		says   string
	}{
		{"no type", svc.Permissions.Create(f.ID, &drive.Permission{Role: "reader"}), 400, "required", "type"},
		{"no role", svc.Permissions.Create(f.ID, &drive.Permission{Type: "anyone"}), 400, "required", "role"},
		{"a user without an address", svc.Permissions.Create(f.ID, &drive.Permission{Type: "user", Role: "reader"}), 400, "required", "emailAddress"},
		{"a domain without a domain", svc.Permissions.Create(f.ID, &drive.Permission{Type: "domain", Role: "reader"}), 400, "required", "domain"},
		{"an unknown type", svc.Permissions.Create(f.ID, &drive.Permission{Type: "world", Role: "reader"}), 400, "badRequest", "type"},
		{"an unknown role", svc.Permissions.Create(f.ID, &drive.Permission{Type: "anyone", Role: "admin"}), 400, "badRequest", "role"},
		{"a malformed address", svc.Permissions.Create(f.ID, &drive.Permission{Type: "user", Role: "reader", EmailAddress: "bob at example"}), 400, "badRequest", "address"},
		{"owner without transferOwnership", svc.Permissions.Create(f.ID, &drive.Permission{Type: "user", Role: "owner", EmailAddress: bob}), 403, "forbidden", "transferOwnership"},
		{"organizer outside a shared drive", svc.Permissions.Create(f.ID, &drive.Permission{Type: "user", Role: "organizer", EmailAddress: bob}), 400, "invalidSharingRequest", "shared drives"},
		{"no Google account and no notification", svc.Permissions.Create(f.ID, &drive.Permission{Type: "user", Role: "reader", EmailAddress: "zoe@nowhere.example"}).SendNotificationEmail(false), 400, "invalidSharingRequest", "Notify people"},
		{"a notification for anyone", svc.Permissions.Create(f.ID, &drive.Permission{Type: "anyone", Role: "reader"}).SendNotificationEmail(true), 400, "badRequest", "sendNotificationEmail"},
	} {
		_, err := tc.call.Do()
		ge := wantReason(t, err, tc.code, tc.reason)
		if !strings.Contains(ge.Message, tc.says) {
			t.Errorf("%s: message %q does not say %q", tc.name, ge.Message, tc.says)
		}
	}
	// With the notification (the default), an address without an account is invited.
	if _, err := svc.Permissions.Create(f.ID, &drive.Permission{Type: "user", Role: "reader", EmailAddress: "zoe@nowhere.example"}).Do(); err != nil {
		t.Errorf("inviting with the notification: %v", err)
	}
	if perms, _ := e.drive.Permissions(f.ID); len(perms) != 2 {
		t.Errorf("%d permissions after the refusals and one invite, want the owner and zoe", len(perms))
	}
}

// TestSharedDrivePermissions: a shared drive's item lists its members
// (organizers, inherited from the drive) with supportsAllDrives, and its
// File has no permissions field, as the discovery document says.
func TestSharedDrivePermissions(t *testing.T) {
	e := newEnv(t)
	d, err := e.drive.PutSharedDrive("Finance", ann, bob)
	if err != nil {
		t.Fatal(err)
	}
	f := e.put(ann, drivesvc.FileSpec{Name: "invoice.pdf", Content: []byte("%PDF"), SharedDrive: d.ID})
	svc := e.driveClient(e.token(ann))
	_, err = svc.Permissions.List(f.ID).Do()
	wantReason(t, err, 404, "notFound") // without supportsAllDrives
	list, err := svc.Permissions.List(f.ID).SupportsAllDrives(true).Fields("permissions(emailAddress,role,permissionDetails)").Do()
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Permissions) != 2 {
		t.Fatalf("%d permissions, want the two members", len(list.Permissions))
	}
	for _, p := range list.Permissions {
		if p.Role != "organizer" || len(p.PermissionDetails) != 1 || !p.PermissionDetails[0].Inherited || p.PermissionDetails[0].InheritedFrom != d.ID {
			t.Errorf("member permission %+v, want an organizer inherited from the drive", p)
		}
	}
	got, err := svc.Files.Get(f.ID).SupportsAllDrives(true).Fields("permissions,capabilities/canShare").Do()
	if err != nil || got.Permissions != nil || !got.Capabilities.CanShare {
		t.Errorf("shared-drive file: %v, permissions %v, canShare %v", err, got.Permissions, got.Capabilities.CanShare)
	}
	if _, err := svc.Permissions.Create(f.ID, &drive.Permission{Type: "user", Role: "fileOrganizer", EmailAddress: bob}).SupportsAllDrives(true).Do(); err != nil {
		t.Errorf("fileOrganizer in a shared drive: %v", err)
	}
}

// TestDomainAndLinkSharingLetPeopleIn: a domain permission reaches the
// domain's users by id (with the resource key, if any), not others.
func TestDomainAndLinkSharingLetPeopleIn(t *testing.T) {
	e := newEnv(t)
	f := e.put(ann, drivesvc.FileSpec{Name: "memo.txt", Content: []byte("x"),
		Permissions: []drivesvc.Permission{{Type: "domain", Role: "reader", Domain: "example.com"}}})
	if _, err := e.driveClient(e.token(bob)).Files.Get(f.ID).Do(); err != nil {
		t.Errorf("bob@example.com with the domain's permission: %v", err)
	}
	_, err := e.driveClient(e.token(carol)).Files.Get(f.ID).Do()
	wantReason(t, err, 404, "notFound")
	code, _, _ := e.do("GET", e.srv.URL+"/drive/v3/files/"+f.ID+"/permissions", e.token(bob), nil, nil)
	if code != http.StatusForbidden {
		t.Errorf("a domain reader lists the sharing: %d, want 403", code)
	}
}
