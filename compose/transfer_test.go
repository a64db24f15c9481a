package compose_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/refusal"
)

// transfers resolves URIs by id for the account's user, as the upload
// service does: another user's id reads as unknown.
type transfers map[string]struct {
	user string
	file string // "" while uploading
}

func (m transfers) ResolveTransfer(ctx context.Context, acct *account.Account, id string) (drive.Ref, error) {
	t, ok := m[id]
	switch {
	case !ok || t.user != acct.ID():
		return drive.Ref{}, handle.ErrUnknownTransfer
	case t.file == "":
		return drive.Ref{}, handle.ErrTransferPending
	}
	return drive.Ref{ID: t.file}, nil
}

func TestTransferURIsResolveForTheirUserOnly(t *testing.T) {
	e := newEnv(t, compose.Config{})
	f, data := e.putBytes("scan.pdf", 40_000)
	const mine, pending, theirs = "AAAAAAAAAAAAAAAAmine", "AAAAAAAAAAAApending", "AAAAAAAAAAAAAtheirs"
	e.svc = compose.New(compose.Config{Transfers: transfers{
		mine: {user: "u-ana", file: f.ID}, pending: {user: "u-ana"}, theirs: {user: "u-bob", file: f.ID},
	}})
	ctx, acct := context.Background(), e.as(identity.User{ID: "u-ana", Email: user}, nil)
	send := func(id string) (compose.Result, error) {
		uri := handle.Transfer{Host: "drivemail.example.com", ID: id}
		return e.svc.Send(ctx, acct, message(compose.Attachment{Source: compose.DriveFile{Handle: uri}}), compose.Options{})
	}

	res, err := send(mine)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	_, root := goParse(t, e.Message(user, res.ID))
	if l := root.leaves(); len(l) != 2 || !bytes.Equal(l[1].Body, data) || res.Attached[0].FileID != f.ID {
		t.Fatalf("the URI's Drive file did not go: %+v", res.Attached)
	}

	before := e.Emu.Stats()
	for id, want := range map[string]string{theirs: "unknown_file_uri", "AAAAAAAAAAAAnowhere": "unknown_file_uri", pending: "file_uri_not_uploaded"} {
		_, err := send(id)
		r, ok := refusal.As(err)
		if !ok || string(r.Kind) != want || !strings.Contains(r.Text, "mcp-file://drivemail.example.com/transfer/"+id) {
			t.Errorf("%s: err = %v, want %s naming the URI", id, err, want)
		}
	}
	unchanged(t, before, e.Emu.Stats())
	_, errTheirs := send(theirs)
	_, errNowhere := send("AAAAAAAAAAAAnowhere")
	if strings.ReplaceAll(errTheirs.Error(), theirs, "X") != strings.ReplaceAll(errNowhere.Error(), "AAAAAAAAAAAAnowhere", "X") {
		t.Errorf("another user's URI reads differently from an unknown one:\n%v\n%v", errTheirs, errNowhere)
	}

	e.svc = compose.New(compose.Config{})
	if _, err := send(mine); refusal.KindOf(err) != "unknown_file_uri" || !strings.Contains(err.Error(), "--file-transfer") {
		t.Errorf("without a resolver: %v", err)
	}
}
