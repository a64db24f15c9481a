package pick

import (
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"time"

	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/store"
)

//go:embed page.js
var pageJS string

// page is the pick page in its three states: a problem that stops it;
// the landing a link opens (a button, so that a link preview's GET
// spends nothing); and the Picker, with the settings its script reads
// from a JSON block, never a URL.
var page = template.Must(template.New("pick").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Choose files for drivemail</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1f1f1f;background:#f8f9fa}
main{max-width:40rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.4rem;margin-top:0}button{font:inherit;padding:.5rem 1rem;cursor:pointer}
#files li{margin:.2rem 0}.problem{color:#b3261e}
</style></head>
<body><main>
<h1>Choose files for drivemail</h1>
{{if .Problem}}<p id="problem" class="problem">{{.Problem}}</p>
{{else if .Landing}}<p>Your assistant asked you to choose files from your Google Drive. drivemail can attach the files you choose, and no other file of yours.</p>
<form id="open" method="POST"><button id="choose" type="submit">Choose files in Google Drive</button></form>
<p><small>This link works once, until {{.Until}}.</small></p>
{{else}}<p id="status" role="status">Opening Google's file picker…</p>
<p id="hint">Choose up to {{.MaxFiles}} files in the picker (Docs, Sheets and Slides too); drivemail can then attach them, and no other file of yours.</p>
<ul id="files"></ul>
<p><button id="again" type="button" hidden>Open the picker again</button></p>
<noscript><p class="problem">This page needs JavaScript to show Google's file picker.</p></noscript>
<script type="application/json" id="config">{{.Config}}</script>
<script nonce="{{.Nonce}}" src="{{.Script}}"></script>
<script nonce="{{.Nonce}}">{{.JS}}</script>
{{end}}</main></body></html>
`))

// pageConfig is what the page's script is told. Token is a Google
// access token that carries drive.file alone (Tokens.PickerToken).
type pageConfig struct {
	Token    string `json:"token"`
	APIKey   string `json:"apiKey"`
	AppID    string `json:"appId"`
	MaxFiles int    `json:"maxFiles"`
	PageKey  string `json:"pageKey"`
}

// Sentences the page shows when it cannot open the Picker.
const (
	saidInvalid = "This link is not one drivemail made, or it is incomplete. Ask your assistant for a new one (drive_pick)."
	saidExpired = "This link has expired: each works for 15 minutes. Ask your assistant for a new one (drive_pick)."
	saidUsed    = "This link was opened already, and each works once. If you did not finish choosing, ask your assistant for a new one (drive_pick)."
	saidBroken  = "drivemail could not get Google's file picker ready. Ask your assistant for a new link (drive_pick) and try again in a minute."
)

// servePage answers GET and HEAD: the landing, for a ticket that is
// sealed here and live. It spends nothing: only the button's POST does.
func (s *Service) servePage(w http.ResponseWriter, r *http.Request, tok string) {
	c, err := s.seal.open(tok, aadTicket, s.cfg.Now())
	if problem, status := ticketProblem(err); problem != "" {
		s.writePage(w, r, status, pageState{Problem: problem})
		return
	}
	s.writePage(w, r, http.StatusOK, pageState{Landing: true, Until: time.Unix(c.Expires, 0).UTC().Format("15:04 UTC")})
}

// ticketProblem is the sentence and status for a ticket open refused.
func ticketProblem(err error) (string, int) {
	switch {
	case err == nil:
		return "", http.StatusOK
	case errors.Is(err, errExpired):
		return saidExpired, http.StatusGone
	}
	return saidInvalid, http.StatusNotFound
}

// serveOpen answers the landing's button: it spends the ticket and shows
// the Picker with the user's drive.file token and a page key for the
// choice.
func (s *Service) serveOpen(w http.ResponseWriter, r *http.Request, tok string) {
	ctx := r.Context()
	now := s.cfg.Now()
	c, err := s.seal.open(tok, aadTicket, now)
	if problem, status := ticketProblem(err); problem != "" {
		s.writePage(w, r, status, pageState{Problem: problem})
		return
	}
	switch err := s.cfg.Once.UseOnce(ctx, ticketKey(tok), time.Unix(c.Expires, 0).Add(time.Minute)); {
	case errors.Is(err, store.ErrUsed):
		s.writePage(w, r, http.StatusGone, pageState{Problem: saidUsed})
		return
	case err != nil:
		s.cfg.Logger.ErrorContext(ctx, "pick: record a ticket's use", "user", c.User, "err", err)
		s.writePage(w, r, http.StatusServiceUnavailable, pageState{Problem: saidBroken})
		return
	}
	token, _, err := s.cfg.Tokens.PickerToken(ctx, c.User)
	if err != nil {
		said := saidBroken
		if ref, ok := refusal.As(err); ok {
			said = ref.Text // reconnect, or allow drive.file
		} else {
			s.cfg.Logger.WarnContext(ctx, "pick: no Picker token", "user", c.User, "err", err)
		}
		s.writePage(w, r, http.StatusForbidden, pageState{Problem: said})
		return
	}
	key, err := s.seal.seal(claims{User: c.User, Expires: now.Add(s.cfg.PageTTL).Unix(), Ticket: store.Hash(tok)}, aadPageKey)
	if err != nil {
		s.cfg.Logger.ErrorContext(ctx, "pick: seal a page key", "err", err)
		s.writePage(w, r, http.StatusInternalServerError, pageState{Problem: saidBroken})
		return
	}
	s.cfg.Logger.InfoContext(ctx, "pick page opened", "user", c.User)
	s.writePage(w, r, http.StatusOK, pageState{Config: pageConfig{Token: token, APIKey: s.cfg.APIKey, AppID: s.cfg.AppID,
		MaxFiles: s.cfg.MaxFiles, PageKey: key}})
}

// pageState is which page to show: a Problem, the Landing (with the
// link's deadline), or the Picker with its Config.
type pageState struct {
	Problem string
	Landing bool
	Until   string
	Config  pageConfig
}

// writePage renders the page in state.
func (s *Service) writePage(w http.ResponseWriter, r *http.Request, status int, state pageState) {
	nonce := newNonce()
	s.pageHeaders(w, nonce, state.Problem == "" && !state.Landing, framedInView(r))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	_ = page.Execute(w, map[string]any{
		"Problem": state.Problem, "Landing": state.Landing, "Until": state.Until,
		"MaxFiles": s.cfg.MaxFiles, "Config": state.Config, "Nonce": nonce,
		"Script": s.cfg.Endpoints.PickerScriptURL(), "JS": template.JS(pageJS),
	})
}

// newNonce is a fresh script nonce.
func newNonce() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
