package views

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

func newSet(t *testing.T, cfg Config) *Set {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	scriptRE = regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`)
	styleRE  = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	cspRE    = regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`)
)

func directives(t *testing.T, html string) map[string][]string {
	t.Helper()
	m := cspRE.FindStringSubmatch(html)
	if m == nil {
		t.Fatal("the document has no Content-Security-Policy")
	}
	out := map[string][]string{}
	for _, d := range strings.Split(m[1], ";") {
		f := strings.Fields(d)
		if len(f) > 0 {
			out[f[0]] = f[1:]
		}
	}
	return out
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Each document is whole and small, loads nothing from anywhere, and its
// own policy runs its one script and its style by hash alone: no inline
// handler, no other script, no fetch, no frame, no form.
func TestComposeDocument(t *testing.T) {
	v := newSet(t, Config{}).Views()[0]
	if v.URI != ComposeURI {
		t.Fatalf("first view is %s", v.URI)
	}
	html := v.HTML
	if len(html) > MaxDocumentBytes {
		t.Errorf("the compose view is %d bytes, over %d", len(html), MaxDocumentBytes)
	}
	t.Logf("compose view: %d bytes", len(html))
	if !strings.HasPrefix(html, "<!doctype html>") || strings.Contains(html, "{{") {
		t.Error("the document is not a whole HTML document with every part filled in")
	}
	scripts := scriptRE.FindAllStringSubmatch(html, -1)
	if len(scripts) != 1 || strings.TrimSpace(scripts[0][1]) != "" {
		t.Fatalf("want one inline script and no script src, got %d: %q", len(scripts), scripts)
	}
	styles := styleRE.FindAllStringSubmatch(html, -1)
	if len(styles) != 1 {
		t.Fatalf("want one style element, got %d", len(styles))
	}
	d := directives(t, html)
	want := map[string][]string{
		"default-src": {"'none'"}, "script-src": {sha(scripts[0][2])}, "style-src": {sha(styles[0][1])},
		"img-src": {"data:"}, "connect-src": {"'none'"}, "frame-src": {"'none'"}, "base-uri": {"'none'"}, "form-action": {"'none'"},
	}
	for name, w := range want {
		if strings.Join(d[name], " ") != strings.Join(w, " ") {
			t.Errorf("%s = %v, want %v", name, d[name], w)
		}
	}
	if len(d) != len(want) {
		t.Errorf("directives %v, want exactly %v", d, want)
	}
	for _, attr := range []string{" onclick=", " onload=", " onerror=", " style=", "src=\"http", "href=\"http"} {
		if strings.Contains(html, attr) {
			t.Errorf("the document has %q, which its policy would block or which loads from elsewhere", attr)
		}
	}
}

// The scripts never write markup, evaluate strings or load code: every
// value reaches the page as text (el, textContent, an input's value).
func TestScriptsWriteTextOnly(t *testing.T) {
	forbidden := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*["']on|\.src\s*=|import\(`)
	err := fs.WalkDir(web, "web", func(path string, e fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".js") {
			return err
		}
		b, err := web.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			if m := forbidden.FindString(line); m != "" && !allowedLoad(path, line) {
				t.Errorf("%s:%d uses %s", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// allowedLoad is the one frame a view opens: the pick view's frame of
// drivemail's pick page, whose link it checked against the prefix its
// document names.
func allowedLoad(path, line string) bool {
	return path == "web/pick.js" && strings.Contains(line, "frame.src = link ")
}

// resources/list and resources/read: ui:// URIs, the exact MIME type,
// the document as text, and the metadata (an empty policy for the compose
// view: it reaches nothing) on both the entry and the content, in the
// spec's names and ChatGPT's.
func TestResources(t *testing.T) {
	res := newSet(t, Config{}).Resources()
	if len(res) != 1 {
		t.Fatalf("%d resources without the pick view, want 1", len(res))
	}
	r := res[0]
	if r.Resource.URI != ComposeURI || r.Resource.MIMEType != "text/html;profile=mcp-app" || !strings.HasPrefix(r.Resource.URI, "ui://") {
		t.Errorf("entry %s %s", r.Resource.URI, r.Resource.MIMEType)
	}
	entry, err := json.Marshal(r.Resource)
	if err != nil {
		t.Fatal(err)
	}
	contents, err := r.Handler(context.Background(), mcp.ReadResourceRequest{})
	if err != nil || len(contents) != 1 {
		t.Fatalf("read: %v, %d contents", err, len(contents))
	}
	text, ok := contents[0].(mcp.TextResourceContents)
	if !ok || text.URI != ComposeURI || text.MIMEType != MIMEType || !strings.HasPrefix(text.Text, "<!doctype html>") {
		t.Fatalf("content %T %+v", contents[0], contents[0])
	}
	content, err := json.Marshal(text)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"list entry": entry, "content": content} {
		var got struct {
			Meta struct {
				UI struct {
					CSP           map[string][]string `json:"csp"`
					PrefersBorder bool                `json:"prefersBorder"`
				} `json:"ui"`
				OpenAI map[string][]string `json:"openai/widgetCSP"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, k := range []string{"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"} {
			if v, ok := got.Meta.UI.CSP[k]; !ok || v == nil || len(v) != 0 {
				t.Errorf("%s: _meta.ui.csp.%s = %v, want [] (nothing beyond the document)", name, k, v)
			}
		}
		for _, k := range []string{"connect_domains", "resource_domains", "frame_domains"} {
			if v, ok := got.Meta.OpenAI[k]; !ok || len(v) != 0 {
				t.Errorf("%s: openai/widgetCSP.%s = %v, want []", name, k, v)
			}
		}
		if !got.Meta.UI.PrefersBorder {
			t.Errorf("%s: no prefersBorder", name)
		}
	}
}

// A tool's linkage names its view in the spec's key and ChatGPT's; an
// app-only tool is hidden from the model in both.
func TestToolMeta(t *testing.T) {
	b, _ := json.Marshal(ToolMeta(ComposeURI))
	if string(b) != `{"openai/outputTemplate":"ui://drivemail/compose","ui":{"resourceUri":"ui://drivemail/compose"}}` {
		t.Errorf("ToolMeta = %s", b)
	}
	b, _ = json.Marshal(AppOnlyMeta())
	if string(b) != `{"openai/visibility":"private","openai/widgetAccessible":true,"ui":{"visibility":["app"]}}` {
		t.Errorf("AppOnlyMeta = %s", b)
	}
}

// A host renders views when it declares the extension with drivemail's
// view type, and not for another type or a malformed declaration.
func TestDeclares(t *testing.T) {
	for ext, want := range map[string]bool{
		`{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`:               true,
		`{"io.modelcontextprotocol/ui":{"mimeTypes":["text/plain","text/html; profile=mcp-app"]}}`: true,
		`{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html+skybridge"]}}`:                     false,
		`{"io.modelcontextprotocol/ui":{}}`:                                                        false,
		`{"io.modelcontextprotocol/ui":{"mimeTypes":"text/html;profile=mcp-app"}}`:                 false,
		`{"io.modelcontextprotocol/other":{"mimeTypes":["text/html;profile=mcp-app"]}}`:            false,
		`[]`: false,
		``:   false,
	} {
		if got := DeclaresJSON(json.RawMessage(ext)); got != want {
			t.Errorf("DeclaresJSON(%s) = %v, want %v", ext, got, want)
		}
	}
}

// A 2026-07-28 request says on itself whether its client renders views,
// whatever the transport remembered; an older one is what the transport
// says its session declared.
func TestRenders(t *testing.T) {
	declared := &mcp.ClientCapabilities{Extensions: map[string]any{Extension: map[string]any{"mimeTypes": []any{MIMEType}}}}
	modern := func(caps *mcp.ClientCapabilities) context.Context {
		return mcpserver.WithRequestProtocolInfo(context.Background(), &mcpserver.RequestProtocolInfo{Modern: true, ClientCapabilities: caps})
	}
	for name, tc := range map[string]struct {
		ctx  context.Context
		want bool
	}{
		"2026-07-28, declared":                       {modern(declared), true},
		"2026-07-28, not declared":                   {modern(&mcp.ClientCapabilities{}), false},
		"2026-07-28, no capabilities":                {modern(nil), false},
		"2026-07-28, not declared, session said yes": {WithRenders(modern(&mcp.ClientCapabilities{}), true), false},
		"2025, the session declared":                 {WithRenders(context.Background(), true), true},
		"2025, the session did not":                  {WithRenders(context.Background(), false), false},
		"nothing known":                              {context.Background(), false},
	} {
		if got := Renders(tc.ctx); got != tc.want {
			t.Errorf("%s: Renders = %v, want %v", name, got, tc.want)
		}
	}
}

// The pick view frames drivemail's own pick page and nothing else: its
// policy and its resource's csp name drivemail's origin alone, as a frame
// source; its script knows the prefix of the links it may open.
func TestPickDocument(t *testing.T) {
	base, _ := url.Parse("https://mail.example.com/")
	views := newSet(t, Config{Pick: true, BaseURL: base}).Views()
	if len(views) != 2 || views[1].URI != PickURI {
		t.Fatalf("views: %+v", views)
	}
	v := views[1]
	if len(v.HTML) > MaxDocumentBytes {
		t.Errorf("the pick view is %d bytes, over %d", len(v.HTML), MaxDocumentBytes)
	}
	t.Logf("pick view: %d bytes", len(v.HTML))
	d := directives(t, v.HTML)
	if got := strings.Join(d["frame-src"], " "); got != "https://mail.example.com" {
		t.Errorf("frame-src %q, want drivemail's origin alone", got)
	}
	for _, name := range []string{"connect-src", "form-action", "base-uri"} {
		if got := strings.Join(d[name], " "); got != "'none'" {
			t.Errorf("%s %q, want 'none'", name, got)
		}
	}
	scripts := scriptRE.FindAllStringSubmatch(v.HTML, -1)
	if len(scripts) != 1 || strings.Join(d["script-src"], " ") != sha(scripts[0][2]) {
		t.Errorf("script-src %v does not hold the one script by hash", d["script-src"])
	}
	if !strings.Contains(scripts[0][2], `const VIEW_DATA = Object.freeze({"pickPrefix": "https://mail.example.com/pick/"});`) {
		t.Error("the script is not told the pick page's prefix")
	}
	if want := []string{"https://mail.example.com"}; strings.Join(v.CSP.FrameDomains, " ") != want[0] ||
		len(v.CSP.ConnectDomains)+len(v.CSP.ResourceDomains)+len(v.CSP.BaseURIDomains) != 0 {
		t.Errorf("resource csp %+v, want frameDomains %v alone", v.CSP, want)
	}
	if _, err := New(Config{Pick: true}); err == nil {
		t.Error("a pick view without drivemail's base URL was made")
	}
}

// A value the data script carries cannot end its element, whatever it is.
func TestDataScriptEscapes(t *testing.T) {
	got := dataScript(map[string]string{"a": `</script><img src=x onerror=alert(1)>`})
	if strings.Contains(strings.ToLower(got), "</script") || strings.Contains(got, "<img") {
		t.Errorf("dataScript = %s", got)
	}
}

// A document of MaxDocumentBytes is served; one byte more is refused.
func TestDocumentSizeLimit(t *testing.T) {
	at := strings.Repeat("x", MaxDocumentBytes)
	if err := fits("at.html", at, MaxDocumentBytes); err != nil {
		t.Errorf("a document of MaxDocumentBytes: %v", err)
	}
	if err := fits("past.html", at+"x", MaxDocumentBytes); err == nil || !strings.Contains(err.Error(), "past.html is 102401 bytes, over 102400") {
		t.Errorf("one byte more: %v", err)
	}
}
