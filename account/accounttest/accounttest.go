// Package accounttest opens accounts for tests: over an emulator (the
// user's token carries the scopes their identity says they granted), or
// over an HTTP client of the test's choosing, such as one that wraps an
// emulator's transport to count or break requests.
package accounttest

import (
	"context"
	"errors"
	"net/http"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/identity"
)

// Emulated is the account of email on env, who granted scopes: its
// identity and its token say the same. opts.Endpoints is env's.
func Emulated(env *emutest.Env, opts account.Options, email string, scopes ...string) *account.Account {
	opts.Endpoints = env.Endpoints
	u := identity.User{ID: email, Email: email, GoogleScopes: scopes}
	return Over(u, env.Client(email, scopes...), opts)
}

// Over is u's account, whose Google calls all go through hc.
func Over(u identity.User, hc *http.Client, opts account.Options) *account.Account {
	return account.NewDoor(Fixed{HTTP: hc}, opts).Open(u)
}

// Fixed is account.Tokens that gives every user the same client; nil
// gives none, for tests whose fakes never reach Google.
type Fixed struct{ HTTP *http.Client }

// errNoClient: a Fixed without a client was asked for one.
var errNoClient = errors.New("accounttest: this test gives no Google client")

// Client implements account.Tokens.
func (f Fixed) Client(context.Context, string) (*http.Client, error) {
	if f.HTTP == nil {
		return nil, errNoClient
	}
	return f.HTTP, nil
}
