package drivesvc_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/api/drive/v3"
	"google.golang.org/api/googleapi"

	"github.com/drivemail/drivemail/emulator/drivesvc"
)

func TestGenerateIDs(t *testing.T) {
	e := newEnv(t)
	c := e.driveClient(e.token(ann))
	res, err := c.Files.GenerateIds().Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "drive#generatedIds" || res.Space != "drive" || len(res.Ids) != 10 {
		t.Fatalf("default generateIds: kind %q space %q %d ids, want drive#generatedIds, drive, 10", res.Kind, res.Space, len(res.Ids))
	}
	seen := map[string]bool{}
	for _, id := range res.Ids {
		if len(id) != 33 || id[0] != '1' || strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" || seen[id] {
			t.Errorf("id %q: want 33 distinct characters of A-Z a-z 0-9 _ - starting with 1, as Google's", id)
		}
		seen[id] = true
	}
	for _, n := range []int64{1, 1000} {
		res, err := c.Files.GenerateIds().Count(n).Space("drive").Type("files").Do()
		if err != nil || int64(len(res.Ids)) != n {
			t.Errorf("count=%d: %d ids, err %v", n, len(res.Ids), err)
		}
	}
	res, err = c.Files.GenerateIds().Space("appDataFolder").Fields("space").Do()
	if err != nil || res.Space != "appDataFolder" || len(res.Ids) != 0 {
		t.Errorf("space=appDataFolder with fields=space: %+v %v", res, err)
	}
	// A drive.file token may generate ids; drive.readonly may not.
	if _, err := e.driveClient(e.token(ann, drivesvc.ScopeDriveFile)).Files.GenerateIds().Count(1).Do(); err != nil {
		t.Errorf("drive.file: %v", err)
	}
	_, err = e.driveClient(e.token(ann, drivesvc.ScopeDriveReadonly)).Files.GenerateIds().Count(1).Do()
	wantReason(t, err, 403, "insufficientPermissions")
}

func TestGenerateIDsRefusals(t *testing.T) {
	e := newEnv(t)
	tok := e.token(ann)
	base := e.srv.URL + "/drive/v3/files/generateIds?"
	for _, tc := range []struct {
		query, reason, location string
	}{
		{"count=0", "invalid", "count"},
		{"count=1001", "invalid", "count"},
		{"count=-1", "invalid", "count"},
		{"count=ten", "invalid", "count"},
		{"space=photos", "badRequest", "space"},
		{"type=folders", "badRequest", "type"},
		{"type=shortcuts&space=appDataFolder", "badRequest", "type"},
		{"fields=ids,nope", "invalidParameter", "fields"},
	} {
		code, _, body := e.do("GET", base+tc.query, tok, nil, nil)
		var got struct {
			Error struct {
				Message string
				Errors  []struct{ Reason, Location string }
			}
		}
		if err := json.Unmarshal(body, &got); err != nil || code != 400 || len(got.Error.Errors) != 1 ||
			got.Error.Errors[0].Reason != tc.reason || got.Error.Errors[0].Location != tc.location {
			t.Errorf("%s: %d %s, want 400 %s at %s", tc.query, code, body, tc.reason, tc.location)
		}
	}
	if code, _, _ := e.do("GET", base+"count=1", "", nil, nil); code != 401 {
		t.Errorf("no token: %d, want 401", code)
	}
}

func TestCreateWithGeneratedID(t *testing.T) {
	e := newEnv(t)
	c := e.driveClient(e.token(ann))
	gen := func(typ string, n int64) []string {
		t.Helper()
		res, err := c.Files.GenerateIds().Count(n).Type(typ).Do()
		if err != nil {
			t.Fatal(err)
		}
		return res.Ids
	}
	ids := gen("files", 5)

	// Each way of creating takes a generated id: metadata only, multipart, resumable.
	folder, err := c.Files.Create(&drive.File{Id: ids[0], Name: "F", MimeType: drivesvc.MimeFolder}).Do()
	if err != nil || folder.Id != ids[0] {
		t.Fatalf("folder with a generated id: %+v %v", folder, err)
	}
	small, err := c.Files.Create(&drive.File{Id: ids[1], Name: "a.txt", Parents: []string{folder.Id}}).Media(strings.NewReader("a")).Do()
	if err != nil || small.Id != ids[1] {
		t.Fatalf("multipart with a generated id: %+v %v", small, err)
	}
	big, err := c.Files.Create(&drive.File{Id: ids[2], Name: "b.bin"}).
		Media(strings.NewReader(strings.Repeat("b", chunk+1)), googleapi.ChunkSize(chunk)).Fields("id,size").Do()
	if err != nil || big.Id != ids[2] || big.Size != chunk+1 {
		t.Fatalf("resumable with a generated id: %+v %v", big, err)
	}
	if got, ok := e.drive.FileByID(ids[2]); !ok || got.Owner != ann {
		t.Errorf("FileByID(%s) = %+v, %v", ids[2], got, ok)
	}

	// Used once: a retry of a create that went through is a conflict, even after
	// the file is gone the id stays spent.
	_, err = c.Files.Create(&drive.File{Id: ids[1], Name: "again.txt"}).Media(strings.NewReader("a")).Do()
	wantReason(t, err, 409, "duplicate")
	if err := c.Files.Delete(ids[1]).Do(); err != nil {
		t.Fatal(err)
	}
	_, err = c.Files.Create(&drive.File{Id: ids[1], Name: "again.txt"}).Do()
	wantReason(t, err, 400, "fileIdNotUsable")

	// An id nobody generated, another user's, or one shaped like Google's: refused.
	for _, id := range []string{"1" + strings.Repeat("x", 32), "1234567890"} {
		_, err = c.Files.Create(&drive.File{Id: id, Name: "made-up"}).Do()
		wantReason(t, err, 400, "fileIdNotUsable")
	}
	bobs := e.driveClient(e.token(bob))
	_, err = bobs.Files.Create(&drive.File{Id: ids[3], Name: "stolen"}).Do()
	wantReason(t, err, 400, "fileIdNotUsable")
	// ann's file's id, which bob cannot see, gets the same answer as a made-up one.
	_, err = bobs.Files.Create(&drive.File{Id: ids[2], Name: "probe"}).Do()
	wantReason(t, err, 400, "fileIdNotUsable")
	// bob's attempts did not spend ann's id.
	if f, err := c.Files.Create(&drive.File{Id: ids[3], Name: "mine"}).Do(); err != nil || f.Id != ids[3] {
		t.Errorf("ann's id after bob tried it: %+v %v", f, err)
	}

	// A refused create (a parent that does not exist) does not spend the id.
	_, err = c.Files.Create(&drive.File{Id: ids[4], Name: "x", Parents: []string{"1NoSuchFolder00000000"}}).Do()
	wantReason(t, err, 404, "notFound")
	if _, err := c.Files.Create(&drive.File{Id: ids[4], Name: "x"}).Do(); err != nil {
		t.Errorf("id after a refused create: %v", err)
	}

	// Ids are for the type they were generated for.
	sc := gen("shortcuts", 2)
	_, err = c.Files.Create(&drive.File{Id: sc[0], Name: "file with a shortcut id"}).Do()
	wantReason(t, err, 400, "fileIdNotUsable")
	_, err = c.Files.Create(&drive.File{Id: gen("files", 1)[0], Name: "shortcut with a file id", MimeType: drivesvc.MimeShortcut,
		ShortcutDetails: &drive.FileShortcutDetails{TargetId: big.Id}}).Do()
	wantReason(t, err, 400, "fileIdNotUsable")
	if s, err := c.Files.Create(&drive.File{Id: sc[1], Name: "link", MimeType: drivesvc.MimeShortcut,
		ShortcutDetails: &drive.FileShortcutDetails{TargetId: big.Id}}).Do(); err != nil || s.Id != sc[1] {
		t.Errorf("shortcut with a shortcut id: %+v %v", s, err)
	}
	// appDataFolder is not emulated: its ids create nothing in My Drive.
	app, err := c.Files.GenerateIds().Count(1).Space("appDataFolder").Do()
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Files.Create(&drive.File{Id: app.Ids[0], Name: "app"}).Do()
	wantReason(t, err, 400, "fileIdNotUsable")
}

func TestGeneratedIDsForgetTheOldestPastTheBound(t *testing.T) {
	e := newEnv(t)
	c := e.driveClient(e.token(ann))
	var ids []string
	for range 10 {
		res, err := c.Files.GenerateIds().Count(1000).Do()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Ids...)
	}
	// 10,000 remembered: the first is still usable; one more forgets it.
	res, err := c.Files.GenerateIds().Count(1).Do()
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Files.Create(&drive.File{Id: ids[0], Name: "oldest"}).Do()
	wantReason(t, err, 400, "fileIdNotUsable")
	for i, id := range []string{ids[1], ids[len(ids)-1], res.Ids[0]} {
		if _, err := c.Files.Create(&drive.File{Id: id, Name: "kept " + strconv.Itoa(i)}).Do(); err != nil {
			t.Errorf("id %d still within the bound: %v", i, err)
		}
	}
}
