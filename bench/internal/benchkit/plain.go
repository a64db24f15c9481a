package benchkit

import (
	"context"
	"net/http"

	"golang.org/x/oauth2"
	gdrive "google.golang.org/api/drive/v3"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/internal/google"
)

// PlainServices are the Google client libraries' Drive and Gmail
// services used straight, as email at the emulator (with Drive, sending
// and reading mail granted), and their HTTP client: the baselines a
// bench measures drivemail
// against, in the same run.
func PlainServices(ctx context.Context, emulator, email string) (*gdrive.Service, *gm.Service, *http.Client, error) {
	tok, err := GoogleToken(ctx, emulator, email, "https://www.googleapis.com/auth/drive",
		"https://www.googleapis.com/auth/gmail.send", "https://www.googleapis.com/auth/gmail.readonly")
	if err != nil {
		return nil, nil, nil, err
	}
	hc := oauth2.NewClient(ctx, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: tok, TokenType: "Bearer"}))
	ep := google.Endpoints{Base: emulator}
	ds, err := gdrive.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, ep.DriveOptions()...)...)
	if err != nil {
		return nil, nil, nil, err
	}
	gs, err := gm.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, ep.GmailOptions()...)...)
	if err != nil {
		return nil, nil, nil, err
	}
	return ds, gs, hc, nil
}
