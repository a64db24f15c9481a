package oauth

import (
	"bytes"
	"html/template"
	"net/http"
	"strings"

	"github.com/drivemail/drivemail/oauth/googleauth"
)

const pageStyle = `body{font:16px/1.5 system-ui,sans-serif;max-width:34em;margin:3em auto;padding:0 1em;color:#202124}
h1{font-size:1.4em}.who{background:#f1f3f4;padding:.8em 1em;border-radius:8px}
.warn{color:#a50e0e}ul{padding-left:1.2em}.buttons{display:flex;gap:1em;margin-top:1.5em}
button{font:inherit;padding:.5em 1.4em;border-radius:6px;border:1px solid #dadce0;background:#fff;cursor:pointer}
button#approve{background:#1a73e8;color:#fff;border-color:#1a73e8}small{color:#5f6368}
.dest{border:2px solid #1a73e8;border-radius:8px;padding:.6em 1em;margin-top:1em}
.target{font:600 1.2em ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all;margin:.2em 0}`

var consentTemplate = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Allow {{.ClientName}} to use drivemail?</title><style nonce="{{.Nonce}}">` + pageStyle + `</style></head>
<body><main id="consent">
<h1>Allow <span id="client-name">{{.ClientName}}</span> to use drivemail?</h1>
<div class="who">
{{if .Document}}<p>The application is identified by <strong id="client-id">{{.ClientID}}</strong>.</p>
{{else}}<p class="warn">drivemail cannot verify this name: the application chose it when it registered. Continue only if you just asked <strong>{{.ClientName}}</strong> to connect to drivemail.</p>{{end}}
{{if .Scripts}}<p class="warn" id="mixed-scripts">This name mixes letters of different alphabets ({{.Scripts}}), as a name made to look like another application's would.</p>{{end}}
</div>
<div class="dest"><p>After you approve, the access code goes to</p>
<p class="target" id="redirect-target">{{.Target}}</p>
<p><small id="redirect-kind">{{.TargetKind}}</small></p></div>
<p>It will be able to act through drivemail with your Google account:</p>
<ul id="permissions">{{range .Permissions}}<li>{{.}}</li>{{end}}</ul>
<p><small>Next, Google asks you to sign in and to confirm these permissions. You can disconnect at any time in your application, or remove drivemail at myaccount.google.com/permissions.</small></p>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="request" value="{{.RequestID}}"><input type="hidden" name="csrf" value="{{.CSRF}}">
<div class="buttons"><button id="approve" type="submit" name="decision" value="approve">Approve</button>
<button id="deny" type="submit" name="decision" value="deny">Deny</button></div>
</form></main></body></html>`))

var errorTemplate = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>drivemail: authorization stopped</title><style nonce="{{.Nonce}}">` + pageStyle + `</style></head>
<body><main id="error"><h1>Authorization stopped</h1>
<p id="message">{{.Message}}</p>
{{if .Target}}<div class="who"><p>Application: <strong id="client-name">{{.ClientName}}</strong></p>
<p>It asked drivemail to send your browser back to</p><p class="target" id="redirect-target">{{.Target}}</p>
<p>drivemail did not send you there.</p></div>{{end}}
<p id="advice">{{.Advice}}</p></main></body></html>`))

// consentPage renders the per-client consent page.
func (s *Server) consentPage(w http.ResponseWriter, r *http.Request, c client, redirectURI, requestID, csrf string) {
	nonce := newSecret("")
	target, kind := destination(redirectURI)
	data := map[string]any{
		"ClientName":  shownName(c.Name),
		"Scripts":     strings.Join(mixedScripts(c.Name), ", "),
		"ClientID":    c.ID,
		"Document":    c.Document,
		"Target":      target,
		"TargetKind":  kind,
		"Permissions": s.permissions(),
		"RequestID":   requestID,
		"CSRF":        csrf,
		"Nonce":       nonce,
	}
	// The form may redirect to Google (approve) or to the client (deny):
	// both are form-action targets for browsers that check redirects.
	formTargets := []string{"'self'", s.cfg.Google.ConsentOrigin(), formActionSource(redirectURI)}
	s.renderPage(w, r, http.StatusOK, consentTemplate, data, nonce, formTargets)
}

// permissions describes, in the user's terms, what the Google scopes allow.
func (s *Server) permissions() []string {
	var out []string
	for _, sc := range s.cfg.Google.Scopes() {
		switch sc {
		case googleauth.ScopeGmailSend:
			out = append(out, "Send email as you from Gmail")
		case googleauth.ScopeDriveReadonly:
			out = append(out, "Search and read the files in your Google Drive (to attach them)")
		case googleauth.ScopeDriveFile:
			if s.cfg.Google.DriveFile() {
				out = append(out, "Open only the Google Drive files you pick for it or upload through it (no others)")
			} else {
				out = append(out, "Add files you upload to your Google Drive")
			}
		case googleauth.ScopeGmailCompose:
			out = append(out, "Create Gmail drafts")
		case googleauth.ScopeGmailReadonly:
			out = append(out, "Read your Gmail messages and their attachments (to find, answer, forward and save them)")
		}
	}
	return append(out, "Know your email address")
}

// errorPage shows an error that cannot go back to the client.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, message, advice string) {
	nonce := newSecret("")
	s.renderPage(w, r, status, errorTemplate, map[string]any{"Message": message, "Advice": advice, "Nonce": nonce}, nonce, []string{"'none'"})
}

// requestErrorPage shows an error in an authorization request from a
// known client to one of its redirect URIs, naming both, instead of
// sending the browser there.
func (s *Server) requestErrorPage(w http.ResponseWriter, r *http.Request, status int, c client, redirectURI, message, advice string) {
	nonce := newSecret("")
	target, _ := destination(redirectURI)
	data := map[string]any{"Message": message, "Advice": advice, "Nonce": nonce, "ClientName": shownName(c.Name), "Target": target}
	s.renderPage(w, r, status, errorTemplate, data, nonce, []string{"'none'"})
}

// renderPage writes an HTML page that no other site may frame, that runs
// no script, and that leaks no URL to other sites through the Referer
// header. (Not no-referrer: under that policy browsers send "Origin: null"
// with the consent form, and the form's Origin check would refuse it.)
func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, t *template.Template, data any, nonce string, formTargets []string) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		s.logger.ErrorContext(r.Context(), "render page", "err", err)
		http.Error(w, "drivemail could not render this page.", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+nonce+"'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'; form-action "+strings.Join(nonEmpty(formTargets), " "))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func nonEmpty(list []string) []string {
	var out []string
	for _, v := range list {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
