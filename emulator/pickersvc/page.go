package pickersvc

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"

	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/internal/core"
)

// carried are the dialog's settings its form posts on to the grant.
var carried = []string{"oauth_token", "developer_key", "app_id", "origin", "nonce", "multiselect", "max_items",
	"mine_only", "sdr", "include_folders", "mime_types", "title"}

var dialogPage = template.Must(template.New("dialog").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font:14px sans-serif;margin:16px}ul{list-style:none;padding:0}li{padding:4px 0}</style></head>
<body><h1 id="title">{{.Title}}</h1>
<form id="picker" method="POST" action="/picker/grant">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}{{if .Files}}<ul id="files">
{{range .Files}}<li class="file" data-id="{{.ID}}" data-mime-type="{{.MimeType}}"><label><input type="{{$.Input}}" name="id" value="{{.ID}}"> {{.Name}}</label></li>
{{end}}</ul>{{else}}<p id="empty">No files to show.</p>{{end}}
<button id="select" type="submit" name="action" value="picked">Select</button>
<button id="cancel" type="submit" name="action" value="cancel">Cancel</button>
</form></body></html>
`))

type hidden struct{ Name, Value string }

// writeDialog renders the file list as a form; it runs no script.
func writeDialog(w http.ResponseWriter, form url.Values, req request, files []drivesvc.File) {
	data := struct {
		Title  string
		Hidden []hidden
		Files  []drivesvc.File
		Input  string
	}{Title: req.title, Files: files, Input: "radio"}
	if data.Title == "" {
		data.Title = "Select a file"
	}
	if req.multi {
		data.Input = "checkbox"
	}
	for _, k := range carried {
		if v := form.Get(k); v != "" {
			data.Hidden = append(data.Hidden, hidden{k, v})
		}
	}
	pageHeaders(w, "")
	w.WriteHeader(http.StatusOK)
	_ = dialogPage.Execute(w, data)
}

var resultPage = template.Must(template.New("result").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Google Picker</title></head>
<body><p id="done">{{.Said}}</p>
<pre id="result">{{.JSON}}</pre>
{{if .Origin}}<script nonce="{{.Nonce}}">
parent.postMessage({nonce: {{.Key}}, result: JSON.parse(document.getElementById("result").textContent)}, {{.Origin}});
</script>{{end}}
</body></html>
`))

// writeResult answers a ResponseObject: JSON, or the page whose script
// posts it to the page that opened the Picker (its origin only).
func writeResult(w http.ResponseWriter, r *http.Request, req request, res map[string]any) {
	writeAnswer(w, r, req, http.StatusOK, res, map[string]string{"picked": "Done: the files are picked.", "cancel": "Cancelled.", "error": "The Picker failed."}[res["action"].(string)])
}

// writeAnswer writes res with status, as JSON or as the result page.
func writeAnswer(w http.ResponseWriter, r *http.Request, req request, status int, res map[string]any, said string) {
	if wantsJSON(r) {
		core.WriteJSON(w, status, res)
		return
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	nonce := core.RandomID(16)
	pageHeaders(w, nonce)
	w.WriteHeader(status)
	_ = resultPage.Execute(w, struct {
		Said, JSON, Nonce, Key string
		Origin                 string
	}{said, string(b), nonce, req.nonce, req.origin})
}

// writeRefusal answers a refused request: Google's error shape as JSON,
// or the page that shows the reason and hands the Picker's script
// {action: "error"}.
func (s *Service) writeRefusal(w http.ResponseWriter, r *http.Request, req request, ref *refusal) {
	if wantsJSON(r) {
		core.WriteError(w, ref.status, map[int]string{400: "badRequest", 401: "authError", 403: "forbidden", 404: "notFound"}[ref.status], ref.message)
		return
	}
	writeAnswer(w, r, req, ref.status, map[string]any{"action": "error", "message": ref.message}, ref.message)
}

// pageHeaders lock a Picker page down: no script but the one nonce, no
// framing limits (it lives in the opener's iframe), nothing cached.
func pageHeaders(w http.ResponseWriter, nonce string) {
	csp := "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'"
	if nonce != "" {
		csp += "; script-src 'nonce-" + nonce + "'"
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", csp)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
