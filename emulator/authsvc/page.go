package authsvc

import (
	"html/template"
	"net/http"
	"slices"
	"strconv"
)

// consentPage is what the consent page shows.
type consentPage struct {
	req     authRequest
	users   []string
	chosen  string   // the account picked or typed, kept across a refusal
	usual   string   // the account to preselect without a choice or login_hint
	ticked  []string // scopes ticked on a refused submit; nil means all
	problem string
}

// scopeNames are the descriptions Google shows for the scopes drivemail asks for.
var scopeNames = map[string]string{
	"openid": "Associate you with your personal info on Google",
	"https://www.googleapis.com/auth/userinfo.email":   "See your primary Google Account email address",
	"https://www.googleapis.com/auth/userinfo.profile": "See your personal info, including any personal info you've made publicly available",
	"https://www.googleapis.com/auth/gmail.send":       "Send email on your behalf",
	"https://www.googleapis.com/auth/gmail.compose":    "Manage drafts and send emails",
	"https://www.googleapis.com/auth/gmail.readonly":   "View your email messages and settings",
	"https://www.googleapis.com/auth/gmail.modify":     "Read, compose, and send emails from your Gmail account",
	"https://mail.google.com/":                         "Read, compose, send, and permanently delete all your email from Gmail",
	"https://www.googleapis.com/auth/drive":            "See, edit, create, and delete all of your Google Drive files",
	"https://www.googleapis.com/auth/drive.readonly":   "See and download all your Google Drive files",
	"https://www.googleapis.com/auth/drive.file":       "See, edit, create, and delete only the specific Google Drive files you use with this app",
	"https://www.googleapis.com/auth/spreadsheets":     "See, edit, create, and delete all your Google Sheets spreadsheets",
}

type scopeRow struct {
	ID, Scope, Name string
	Checked, Fixed  bool
}

type userRow struct {
	ID, Email string
	Checked   bool
}

// consentTmpl is the page a browser test clicks: stable ids on every control.
// Allow comes first in the form so Enter in the email field approves;
// row-reverse still shows Cancel on its left, as Google does.
var consentTmpl = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in – Google Accounts (emulated)</title>
<style>
body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#202124}
h1{font-size:1.4rem;font-weight:400}
fieldset{border:1px solid #dadce0;border-radius:8px;margin:1rem 0;padding:.5rem 1rem}
label{display:block;margin:.4rem 0}
code{background:#f1f3f4;padding:0 .2rem}
#error{color:#d93025}
.buttons{display:flex;flex-direction:row-reverse;justify-content:flex-start;gap:1rem}
button{font-size:1rem;padding:.5rem 1.5rem;border-radius:4px;border:1px solid #dadce0;background:#fff}
#approve{background:#1a73e8;color:#fff;border-color:#1a73e8}
</style>
</head>
<body>
<h1>Google Accounts <small>(emulator)</small></h1>
<p id="client">The app <code id="client-id">{{.ClientID}}</code> wants to access your Google Account.</p>
{{if .Problem}}<p id="error" role="alert">{{.Problem}}</p>{{end}}
<form id="consent" method="post" action="/o/oauth2/consent">
<input type="hidden" name="request_id" value="{{.RequestID}}">
<fieldset id="accounts">
<legend>Choose an account</legend>
{{range .Users}}<label for="{{.ID}}"><input type="radio" id="{{.ID}}" name="email" value="{{.Email}}" data-email="{{.Email}}"{{if .Checked}} checked{{end}}> {{.Email}}</label>
{{end}}<label for="typed-email">Use another account <input type="email" id="typed-email" name="typed_email" value="{{.Typed}}" placeholder="name@example.com" autocomplete="email"></label>
</fieldset>
<fieldset id="scopes">
<legend>This will allow the app to</legend>
{{range .Scopes}}<label for="{{.ID}}"><input type="checkbox" id="{{.ID}}" name="scope" value="{{.Scope}}" data-scope="{{.Scope}}"{{if .Checked}} checked{{end}}{{if .Fixed}} disabled{{end}}> {{.Name}} <small><code>{{.Scope}}</code></small></label>
{{end}}</fieldset>
<p class="buttons"><button type="submit" id="approve" name="action" value="approve">Allow</button>
<button type="submit" id="deny" name="action" value="deny">Cancel</button></p>
</form>
</body>
</html>
`))

// renderConsent writes the consent page with status.
func renderConsent(w http.ResponseWriter, status int, p consentPage) {
	data := struct {
		ClientID, RequestID, Problem, Typed string
		Users                               []userRow
		Scopes                              []scopeRow
	}{ClientID: p.req.clientID, RequestID: p.req.id, Problem: p.problem}
	hint := p.chosen
	if hint == "" {
		hint = p.req.loginHint
	}
	if hint == "" && slices.Contains(p.users, p.usual) {
		hint = p.usual
	}
	for i, u := range p.users {
		data.Users = append(data.Users, userRow{ID: "account-" + strconv.Itoa(i), Email: u, Checked: u == hint})
	}
	if hint != "" && !slices.Contains(p.users, hint) {
		data.Typed = hint
	}
	for i, sc := range p.req.scopes {
		name := scopeNames[sc]
		if name == "" {
			name = "Use " + sc
		}
		fixed := slices.Contains(baseScopes, sc)
		data.Scopes = append(data.Scopes, scopeRow{
			ID: "scope-" + strconv.Itoa(i), Scope: sc, Name: name,
			Checked: fixed || p.ticked == nil || slices.Contains(p.ticked, sc), Fixed: fixed,
		})
	}
	setPageHeaders(w)
	w.WriteHeader(status)
	_ = consentTmpl.Execute(w, data)
}

var errorTmpl = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Error 400 ({{.Code}})</title></head>
<body>
<h1>Access blocked: this request is invalid</h1>
<p id="error">Error 400: <span id="error-code">{{.Code}}</span></p>
<p id="error-description">{{.Description}}</p>
</body>
</html>
`))

// renderError writes Google's "Error 400" page for a request it will not
// send back to the client.
func renderError(w http.ResponseWriter, e authError) {
	setPageHeaders(w)
	w.WriteHeader(http.StatusBadRequest)
	_ = errorTmpl.Execute(w, struct{ Code, Description string }{e.code, e.description})
}

func setPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	// No form-action: the form's answer redirects to the client's own origin.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}
