package gmailsvc

import (
	"html/template"
	"net/http"
	"slices"
	"strconv"
)

// outboxTmpl is the outbox page. Ids and classes are stable so a browser
// test can find a message (#msg-ID, article.message), its headers
// (.from .to .cc .bcc .subject .date .size), its HTML body
// (iframe.html-body), text body (pre.text-body), inline parts
// (li.inline-part) and attachments (li.attachment a.download).
var outboxTmpl = template.Must(template.New("outbox").Funcs(template.FuncMap{
	"bytes": humanBytes, "inlineOnly": inlineOnly, "attachmentsOnly": attachmentsOnly,
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Outbox – Google emulator</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#202124;background:#f6f8fc}
h1{font-weight:400}
section.mailbox{margin-bottom:2rem}
article.message{background:#fff;border:1px solid #dadce0;border-radius:8px;padding:1rem;margin:1rem 0;max-width:60rem}
article.draft{border-style:dashed}
.kind{font-size:.75rem;text-transform:uppercase;color:#5f6368;border:1px solid #dadce0;border-radius:4px;padding:0 .3rem}
dl.headers{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:.5rem 0}
dt{color:#5f6368}dd{margin:0}
iframe.html-body{width:100%;height:24rem;border:1px solid #eee;resize:vertical;background:#fff}
pre.text-body{white-space:pre-wrap;background:#f8f9fa;padding:.5rem;max-height:24rem;overflow:auto}
ul.files{padding-left:1.2rem}
</style>
</head>
<body>
<h1>Outbox</h1>
<p id="summary">{{.Total}} message(s). JSON: <a href="/_emulator/messages">/_emulator/messages</a></p>
{{if not .Boxes}}<p id="empty">Nothing has been sent or drafted yet.</p>{{end}}
{{range .Boxes}}<section class="mailbox" data-user="{{.User}}">
<h2 class="user">{{.User}}</h2>
{{range .Messages}}<article class="message {{.Kind}}" id="msg-{{.ID}}" data-message-id="{{.ID}}" data-thread-id="{{.ThreadID}}" data-kind="{{.Kind}}"{{if .DraftID}} data-draft-id="{{.DraftID}}"{{end}}>
<h3><span class="kind">{{.Kind}}</span> <span class="subject">{{.Subject}}</span></h3>
<dl class="headers">
<dt>From</dt><dd class="from">{{.From}}</dd>
<dt>To</dt><dd class="to">{{range $i, $a := .To}}{{if $i}}, {{end}}{{$a}}{{end}}</dd>
{{if .Cc}}<dt>Cc</dt><dd class="cc">{{range $i, $a := .Cc}}{{if $i}}, {{end}}{{$a}}{{end}}</dd>
{{end}}{{if .Bcc}}<dt>Bcc</dt><dd class="bcc">{{range $i, $a := .Bcc}}{{if $i}}, {{end}}{{$a}}{{end}}</dd>
{{end}}<dt>Date</dt><dd class="date">{{.Date}}</dd>
<dt>Size</dt><dd class="size" data-bytes="{{.Size}}">{{bytes .Size}}</dd>
<dt>Structure</dt><dd class="structure"><code>{{.Structure}}</code></dd>
</dl>
{{if .HasHTML}}<iframe class="html-body" sandbox="" src="/_emulator/messages/{{.ID}}/html" title="HTML body of {{.Subject}}"></iframe>
{{end}}{{with $.Text .ID}}<pre class="text-body">{{.}}</pre>
{{end}}{{$inline := inlineOnly .Files}}{{if $inline}}<ul class="files inline-parts">
{{range $inline}}<li class="inline-part" data-part-id="{{.PartID}}" data-content-id="{{.ContentID}}" data-mime-type="{{.MIMEType}}" data-size="{{.Size}}"><a href="{{.URL}}">{{if .Filename}}{{.Filename}}{{else}}cid:{{.ContentID}}{{end}}</a> <span class="type">{{.MIMEType}}</span> <span class="bytes">{{bytes .Size}}</span> (inline)</li>
{{end}}</ul>
{{end}}{{$att := attachmentsOnly .Files}}{{if $att}}<ul class="files attachments">
{{range $att}}<li class="attachment" data-part-id="{{.PartID}}" data-filename="{{.Filename}}" data-mime-type="{{.MIMEType}}" data-size="{{.Size}}"><a class="download" href="{{.URL}}?download=1" download="{{.Filename}}">{{.Filename}}</a> <span class="type">{{.MIMEType}}</span> <span class="bytes">{{bytes .Size}}</span></li>
{{end}}</ul>
{{end}}<p><a class="raw" href="{{.RawURL}}">Original message (.eml)</a></p>
</article>
{{end}}</section>
{{end}}</body>
</html>
`))

// outboxBox is one user's part of the page.
type outboxBox struct {
	User     string
	Messages []Summary
}

// outboxData feeds the template; Text looks up a message's text body.
type outboxData struct {
	Total int
	Boxes []outboxBox
	texts map[string]string
}

// Text returns the text body of message id.
func (d outboxData) Text(id string) string { return d.texts[id] }

func (s *Service) outboxPage(w http.ResponseWriter, r *http.Request) {
	all := s.Messages("")
	data := outboxData{Total: len(all), texts: map[string]string{}}
	s.mu.Lock()
	for _, m := range all {
		if msg := s.byID[m.ID]; msg != nil {
			data.texts[m.ID] = msg.info.text
		}
	}
	s.mu.Unlock()
	for _, m := range all {
		if n := len(data.Boxes); n == 0 || data.Boxes[n-1].User != m.User {
			data.Boxes = append(data.Boxes, outboxBox{User: m.User})
		}
		b := &data.Boxes[len(data.Boxes)-1]
		b.Messages = append(b.Messages, m)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; img-src 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	// A template error mid-page can only be a broken connection.
	_ = outboxTmpl.Execute(w, data)
}

func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	default:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	}
}

func inlineOnly(files []FileEntry) []FileEntry {
	return slices.DeleteFunc(slices.Clone(files), func(f FileEntry) bool { return !f.Inline })
}

func attachmentsOnly(files []FileEntry) []FileEntry {
	return slices.DeleteFunc(slices.Clone(files), func(f FileEntry) bool { return f.Inline })
}
