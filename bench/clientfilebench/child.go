package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime/debug"
	"time"

	"golang.org/x/oauth2"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/account/accounttest"
	"github.com/drivemail/drivemail/bench/internal/benchkit"
	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/internal/safedial"
)

// job is what the parent tells the child: where Google and the file host
// are, whose token to send with, and the two sends to make.
type job struct {
	Emulator  string `json:"emulator"`
	Token     string `json:"token"`
	Email     string `json:"email"`
	CAPEM     []byte `json:"ca_pem"`
	FileURL   string `json:"file_url"`
	DriveFile string `json:"drive_file"`
}

// figure is one send as the child measured it.
type figure struct {
	Name      string        `json:"name"`
	MessageID string        `json:"message_id"`
	Took      time.Duration `json:"took"`
	Growth    int64         `json:"growth"`
	Cleared   bool          `json:"cleared"`
	Err       string        `json:"err,omitempty"`
}

// runChild reads a job on in, makes the sends, and writes one figure
// per line on out.
func runChild(ctx context.Context, in io.Reader, out io.Writer) error {
	var j job
	if err := json.NewDecoder(in).Decode(&j); err != nil {
		return fmt.Errorf("child: read job: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(j.CAPEM) {
		return errors.New("child: no CA certificate in the job")
	}
	// The test seam, by configuration only: loopback allowed, the host's
	// names resolving to it, its CA trusted.
	files, err := clientfile.New(clientfile.Config{
		Hosts:   []string{"*.example.com"},
		RootCAs: roots,
		Policy: safedial.Policy{AllowLoopback: true, LookupNetIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}},
	})
	if err != nil {
		return err
	}
	endpoints, err := google.Parse(j.Emulator)
	if err != nil {
		return err
	}
	svc := compose.New(compose.Config{Files: files})
	hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: j.Token}))
	hc.Timeout = 0
	acct := accounttest.Over(identity.User{ID: "bench", Email: j.Email}, hc, account.Options{Endpoints: endpoints})
	sends := []struct {
		name string
		att  compose.Attachment
	}{
		{"client", compose.Attachment{Source: compose.ClientFile{URL: j.FileURL, FileID: "file-bench", Name: "bench.bin"}}},
		{"drive", compose.Attachment{Source: compose.DriveFile{Handle: handle.MustParse(j.DriveFile)}}},
	}
	enc := json.NewEncoder(out)
	for _, s := range sends {
		debug.FreeOSMemory()
		mark, err := benchkit.MarkPeak(selfPid())
		if err != nil {
			return err
		}
		start := time.Now()
		res, err := svc.Send(ctx, acct, compose.Request{To: []string{"zoe@example.org"}, Subject: "bench " + s.name, BodyText: "bench",
			Attachments: []compose.Attachment{s.att}}, compose.Options{})
		f := figure{Name: s.name, MessageID: res.ID, Took: time.Since(start), Cleared: mark.Cleared}
		if err != nil {
			f.Err = err.Error()
		}
		if f.Growth, err = mark.Growth(); err != nil {
			return err
		}
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	return nil
}

func selfPid() int { return os.Getpid() }
