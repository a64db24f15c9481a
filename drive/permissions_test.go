package drive_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
)

// TestPermissionsPages: a file's sharing comes back whole in pages of
// 100, with who each permission reaches; maxPages stops the reading and
// says the list was not read to its end.
func TestPermissionsPages(t *testing.T) {
	e := newEnv(t)
	var perms []drivesvc.Permission
	for i := range 249 {
		perms = append(perms, drivesvc.Permission{Type: "user", Role: "reader", EmailAddress: fmt.Sprintf("p%03d@other.org", i)})
	}
	perms = append(perms, drivesvc.Permission{Type: "domain", Role: "commenter", Domain: "example.com"})
	f := e.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x", Permissions: perms})
	ctx := context.Background()
	df, err := e.dc.Lookup(ctx, drive.Ref{ID: f.ID})
	if err != nil || !df.CanShare {
		t.Fatalf("lookup: %v, canShare %v; want the owner's file, shareable", err, df.CanShare)
	}
	s, err := e.dc.Permissions(ctx, df, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Complete || len(s.Permissions) != 251 {
		t.Fatalf("3 pages: %d permissions, complete %v; want the owner's and 250, complete", len(s.Permissions), s.Complete)
	}
	if p := s.Permissions[0]; p.Type != "user" || p.Role != "owner" || p.EmailAddress != user {
		t.Errorf("first permission %+v, want the owner", p)
	}
	if p := s.Permissions[250]; p.Type != "domain" || p.Domain != "example.com" || p.Role != "commenter" {
		t.Errorf("last permission %+v, want example.com as commenter", p)
	}
	s, err = e.dc.Permissions(ctx, df, 2)
	if err != nil || s.Complete || len(s.Permissions) != 200 {
		t.Errorf("2 pages: %d permissions, complete %v, %v; want 200, not complete", len(s.Permissions), s.Complete, err)
	}
}

// TestPermissionsOfAFileTheUserMayNotShare: a reader sees canShare false,
// and Drive's 403 if they ask for the sharing anyway.
func TestPermissionsOfAFileTheUserMayNotShare(t *testing.T) {
	e := newEnv(t)
	f := e.Put(other, drivesvc.FileSpec{Name: "Theirs", Kind: drivesvc.KindDoc, DocText: "x", SharedWith: []string{user}})
	df, err := e.dc.Lookup(context.Background(), drive.Ref{ID: f.ID})
	if err != nil || df.CanShare || df.AppAuthorized {
		t.Fatalf("lookup: %v, canShare %v, app authorized %v; want neither", err, df.CanShare, df.AppAuthorized)
	}
	if _, err := e.dc.Permissions(context.Background(), df, 1); !errors.Is(err, drive.ErrFilePermission) {
		t.Errorf("permissions of a file shared for reading: %v, want ErrFilePermission", err)
	}
}

// TestShare: drive.file shares a file its app made, with no
// notification; drive.readonly may not (ErrScope), drive.file may not on
// another file (ErrAppNotAuthorized), and an address without a Google
// account is refused (ErrSharingRefused).
func TestShare(t *testing.T) {
	e := newEnv(t, emutest.ScopeDriveReadonly, emutest.ScopeDriveFile)
	e.Emu.AddUser(other)
	ctx := context.Background()
	app := e.Put(user, drivesvc.FileSpec{Name: "Made here", Kind: drivesvc.KindDoc, DocText: "x", ClientID: "emulator-test"})
	found := e.Put(user, drivesvc.FileSpec{Name: "Found", Kind: drivesvc.KindDoc, DocText: "x"})
	af, err := e.dc.Lookup(ctx, drive.Ref{ID: app.ID})
	if err != nil || !af.AppAuthorized {
		t.Fatalf("lookup: %v, app authorized %v; want true for the app's own file", err, af.AppAuthorized)
	}
	if err := e.dc.Share(ctx, af, other, "commenter"); err != nil {
		t.Fatalf("share: %v", err)
	}
	perms, _ := e.Emu.Drive().Permissions(app.ID)
	if p := perms[len(perms)-1]; p.Type != "user" || p.EmailAddress != other || p.Role != "commenter" {
		t.Errorf("permissions %v: want %s as commenter last", perms, other)
	}
	if err := e.dc.Share(ctx, af, "nobody@nowhere.example", "reader"); !errors.Is(err, drive.ErrSharingRefused) {
		t.Errorf("share with an address without a Google account: %v, want ErrSharingRefused", err)
	}
	ff, _ := e.dc.Lookup(ctx, drive.Ref{ID: found.ID})
	if err := e.dc.Share(ctx, ff, other, "reader"); !errors.Is(err, drive.ErrAppNotAuthorized) {
		t.Errorf("drive.file sharing another file: %v, want ErrAppNotAuthorized", err)
	}
	ro := newEnv(t)
	f := ro.Put(user, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x"})
	rf, _ := ro.dc.Lookup(ctx, drive.Ref{ID: f.ID})
	if err := ro.dc.Share(ctx, rf, other, "reader"); !errors.Is(err, drive.ErrScope) {
		t.Errorf("drive.readonly sharing: %v, want ErrScope", err)
	}
	if st := e.Emu.Stats(); st.PermissionsCreated != 1 {
		t.Errorf("permissions created = %d, want 1", st.PermissionsCreated)
	}
}
