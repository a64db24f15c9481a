package server

import (
	"log/slog"
	"net/http"
	"net/url"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/google"
	"github.com/drivemail/drivemail/oauth/googleauth"
	"github.com/drivemail/drivemail/pick"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/tools"
)

// picks is the pick page of a deployment in file mode: the links
// drive_pick gives and the page they open. nil outside file mode.
type picks struct{ svc *pick.Service }

// picks builds the pick page when Drive is reached with drive.file
// alone; its Picker token comes from gauth, its re-reads through door.
func (c Config) picks(base *url.URL, st store.Store, gauth *googleauth.Service, door *account.Door, endpoints google.Endpoints, logger *slog.Logger) (*picks, error) {
	if !c.driveFile() {
		return nil, nil
	}
	svc, err := pick.New(pick.Config{BaseURL: base, Secrets: c.Secrets, Once: st, Tokens: gauth, Accounts: door,
		Endpoints: endpoints, APIKey: c.GoogleAPIKey, AppID: c.GoogleAppID, MaxFiles: compose.MaxFiles, Logger: logger})
	if err != nil {
		return nil, err
	}
	return &picks{svc: svc}, nil
}

// links is drive_pick's source of links; nil (no drive_pick) outside
// file mode.
func (p *picks) links() tools.Picks {
	if p == nil {
		return nil
	}
	return p.svc
}

// page serves /pick/{ticket}; nil outside file mode.
func (p *picks) page() http.Handler {
	if p == nil {
		return nil
	}
	return p.svc
}
