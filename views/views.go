// Package views holds drivemail's MCP App views (the extension
// io.modelcontextprotocol/ui): HTML documents that a host which renders
// apps shows in the chat with a tool's result, and the resources that
// serve them. The HTML, CSS and script live in web/ and are embedded in
// the binary; each document is assembled here, once, with its style and
// script inline and a Content-Security-Policy that lets in exactly those
// (by hash) and, for the pick view, a frame of drivemail's own pick page.
// Nothing is fetched from anywhere else. Values from Drive, Gmail or the model reach a view's
// page as text only (the scripts never write markup).
//
// Whether the client of a request renders views is told per request by a
// 2026-07-28 client, and remembered by a 2025 client's session id (the
// transport reads it and says so in the context): see Renders.
package views

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// The extension's names, as the spec writes them.
const (
	// Extension is the capability a host declares to render views.
	Extension = "io.modelcontextprotocol/ui"
	// MIMEType is a view's resource type; exact, with no space.
	MIMEType = "text/html;profile=mcp-app"
)

// The views' URIs.
const (
	ComposeURI = "ui://drivemail/compose"
	PickURI    = "ui://drivemail/pick"
)

// ComposeMeta is the key of the compose view's data in a tool result's
// _meta, which hosts hand to the view and not to the model.
const ComposeMeta = "drivemail/compose"

// MaxDocumentBytes bounds each view's assembled document: it travels to
// the host with every resources/read.
const MaxDocumentBytes = 100 << 10

//go:embed web
var web embed.FS

// Config says which views to serve.
type Config struct {
	// Pick serves the pick view (drive_pick exists: serve --drive-scope
	// file), which frames drivemail's pick page under BaseURL.
	Pick    bool
	BaseURL *url.URL
}

// View is one assembled document and what its host must let it reach.
type View struct {
	URI         string
	Name        string
	Title       string
	Description string
	HTML        string
	// CSP is the resource's _meta.ui.csp: the origins beyond the
	// document itself, each list empty for none.
	CSP HostCSP
}

// HostCSP is an MCP App resource's csp metadata.
type HostCSP struct {
	ConnectDomains  []string `json:"connectDomains"`
	ResourceDomains []string `json:"resourceDomains"`
	FrameDomains    []string `json:"frameDomains"`
	BaseURIDomains  []string `json:"baseUriDomains"`
}

// Set is the views one server serves.
type Set struct {
	views []View
}

// New assembles the views cfg asks for.
func New(cfg Config) (*Set, error) {
	compose, err := assemble(page{file: "compose.html", scripts: []string{"bridge.js", "compose.js"}})
	if err != nil {
		return nil, err
	}
	s := &Set{views: []View{{
		URI: ComposeURI, Name: "compose", Title: "Review an email",
		Description: "The message send_email or create_draft prepared, with its files, for the user to edit and send or cancel.",
		HTML:        compose, CSP: HostCSP{ConnectDomains: []string{}, ResourceDomains: []string{}, FrameDomains: []string{}, BaseURIDomains: []string{}},
	}}}
	if cfg.Pick {
		v, err := pickView(cfg)
		if err != nil {
			return nil, err
		}
		s.views = append(s.views, v)
	}
	return s, nil
}

// Views returns the assembled views.
func (s *Set) Views() []View { return append([]View(nil), s.views...) }

// page is what one document is made of.
type page struct {
	file    string
	scripts []string
	// sources are the origins the document lets in beyond its own inline
	// style and script, by CSP directive.
	sources map[string][]string
	// data are values the script reads from the document, each written as
	// a JSON string literal (data-* attributes would be markup).
	data map[string]string
}

// assemble reads a document and fills in its style, script and policy.
func assemble(p page) (string, error) {
	doc, err := web.ReadFile("web/" + p.file)
	if err != nil {
		return "", fmt.Errorf("views: %w", err)
	}
	style, err := web.ReadFile("web/style.css")
	if err != nil {
		return "", fmt.Errorf("views: %w", err)
	}
	var script strings.Builder
	if len(p.data) > 0 {
		script.WriteString(dataScript(p.data))
	}
	for _, name := range p.scripts {
		b, err := web.ReadFile("web/" + name)
		if err != nil {
			return "", fmt.Errorf("views: %w", err)
		}
		script.Write(b)
		script.WriteString("\n")
	}
	js, css := script.String(), string(style)
	// Inline content that closes its element would end it early.
	if strings.Contains(strings.ToLower(js), "</script") || strings.Contains(strings.ToLower(css), "</style") {
		return "", fmt.Errorf("views: %s: a script or style closes its own element", p.file)
	}
	html := strings.NewReplacer(
		"{{CSP}}", policy(js, css, p.sources),
		"{{STYLE}}", css,
		"{{SCRIPT}}", js,
	).Replace(string(doc))
	if err := fits(p.file, html, MaxDocumentBytes); err != nil {
		return "", err
	}
	return html, nil
}

// fits refuses a document over max bytes: a view that grew past its
// budget fails every test, and the server's start, not a host.
func fits(name, html string, max int) error {
	if len(html) > max {
		return fmt.Errorf("views: %s is %d bytes, over %d", name, len(html), max)
	}
	return nil
}

// policy is the document's own Content-Security-Policy: nothing by
// default; its one script and its style by hash, so that no other script
// can run in it even if markup were ever injected; and sources, the
// origins it names. The host applies its own policy too; both hold.
func policy(js, css string, sources map[string][]string) string {
	dirs := map[string][]string{
		"default-src": {"'none'"},
		"script-src":  {hash(js)},
		"style-src":   {hash(css)},
		"img-src":     {"data:"},
		"connect-src": {"'none'"},
		"frame-src":   {"'none'"},
		"base-uri":    {"'none'"},
		"form-action": {"'none'"},
	}
	for d, origins := range sources {
		cur := dirs[d]
		if len(cur) == 1 && cur[0] == "'none'" {
			cur = nil
		}
		dirs[d] = append(cur, origins...)
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, d := range names {
		parts[i] = d + " " + strings.Join(dirs[d], " ")
	}
	return strings.Join(parts, "; ")
}

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}
