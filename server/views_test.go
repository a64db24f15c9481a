package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drivemail/drivemail/prepared"
	"github.com/drivemail/drivemail/views"
)

// withViews serves the views and keeps prepared messages, as serve does.
func withViews(t *testing.T) func(d *Deps) {
	return func(d *Deps) {
		set, err := views.New(views.Config{Pick: true, BaseURL: d.BaseURL})
		if err != nil {
			t.Fatal(err)
		}
		d.Resources = set.Resources()
		var mu sync.Mutex
		used := map[string]bool{}
		errUsed := errors.New("used")
		store, err := prepared.New([][]byte{[]byte("a secret of thirty-two bytes, ok")}, func(_ context.Context, key string, _ time.Time) error {
			mu.Lock()
			defer mu.Unlock()
			if used[key] {
				return errUsed
			}
			used[key] = true
			return nil
		}, errUsed)
		if err != nil {
			t.Fatal(err)
		}
		d.Tools.Prepared = store
	}
}

const (
	uiCaps       = `{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`
	modernUIMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + uiCaps + `}`
)

func initializeWith(version, caps string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"t","version":"1"}}}`
}

// A 2025 client that declared the MCP Apps extension at initialize is
// known by its session id on each later request (the id carries the bit
// under its MAC); a 2026-07-28 client by each request's own capabilities.
// Such a client is listed send_email and create_draft linked to the
// compose view, and send_prepared; every other client the tools it always
// had, byte for byte.
func TestViewsFollowWhatTheClientDeclared(t *testing.T) {
	ts := newTestServer(t, withViews(t))
	resp, _ := post(t, ts, testToken, initializeWith("2025-11-25", uiCaps), nil)
	ui := resp.Header.Get("Mcp-Session-Id")
	resp, _ = post(t, ts, testToken, initializeWith("2025-11-25", `{"elicitation":{}}`), nil)
	plain := resp.Header.Get("Mcp-Session-Id")
	resp, _ = post(t, ts, testToken, initializeWith("2025-03-26", uiCaps), nil)
	older := resp.Header.Get("Mcp-Session-Id")
	_, before := post(t, ts, testToken, toolsList, nil)

	modernList := func(meta string) string {
		return `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`
	}
	for _, tc := range []struct {
		name, session, body string
		views               bool
	}{
		{"2025, declared at initialize", ui, toolsList, true},
		{"2025, an older revision declared it too", older, toolsList, true},
		{"2025, declared something else", plain, toolsList, false},
		{"2025, no session id", "", toolsList, false},
		{"2026-07-28, declared on the request", "", modernList(modernUIMeta), true},
		{"2026-07-28, not declared on the request", "", modernList(modernMeta), false},
		{"2026-07-28, not declared, with a 2025 session that did", ui, modernList(modernMeta), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			version := "2025-11-25"
			if strings.Contains(tc.body, "2026-07-28") {
				version = "2026-07-28"
			}
			headers := map[string]string{"Mcp-Session-Id": tc.session, "Mcp-Protocol-Version": version}
			if version == "2026-07-28" {
				headers["Mcp-Method"] = "tools/list"
			}
			resp, body := post(t, ts, testToken, tc.body, headers)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			tools := listed(t, body)
			compose, _ := tools["send_email"]["_meta"].(map[string]any)["ui"].(map[string]any)
			_, hasSend := tools["send_prepared"]
			if got := compose["resourceUri"] == views.ComposeURI && hasSend; got != tc.views {
				t.Fatalf("views %v, want %v: send_email _meta %v, send_prepared listed %v", got, tc.views, tools["send_email"]["_meta"], hasSend)
			}
			if tc.views {
				if vis := tools["send_prepared"]["_meta"].(map[string]any)["ui"].(map[string]any)["visibility"]; len(vis.([]any)) != 1 || vis.([]any)[0] != "app" {
					t.Errorf("send_prepared's visibility %v, want [app]", vis)
				}
				if draft := tools["create_draft"]["_meta"].(map[string]any)["openai/outputTemplate"]; draft != views.ComposeURI {
					t.Errorf("create_draft's outputTemplate %v", draft)
				}
			} else if version == "2025-11-25" && body != before {
				t.Error("a client that renders no views is listed other tools than before")
			}
		})
	}
	if resp, _ := post(t, ts, otherToken, toolsList, map[string]string{"Mcp-Session-Id": ui}); resp.StatusCode != 404 {
		t.Errorf("another user's token with the session id: %d, want 404", resp.StatusCode)
	}
}

// The bit is the session id's, under its MAC: an id whose flags were
// changed is no id of this server's, and lists no view.
func TestTheViewsBitCannotBeForged(t *testing.T) {
	ts := newTestServer(t, withViews(t))
	resp, _ := post(t, ts, testToken, initialize("2025-11-25"), nil)
	id := resp.Header.Get("Mcp-Session-Id")
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(id, sessionIDPrefix))
	if err != nil {
		t.Fatal(err)
	}
	raw[sessionBodyLen-1] |= byte(flagRendersViews)
	forged := sessionIDPrefix + base64.RawURLEncoding.EncodeToString(raw)
	resp, body := post(t, ts, testToken, toolsList, map[string]string{"Mcp-Session-Id": forged})
	if resp.StatusCode != 404 || strings.Contains(body, "send_prepared") {
		t.Errorf("a forged flag: %d %.200s", resp.StatusCode, body)
	}
}

// The views are resources in both eras: ui:// URIs, the exact MIME type,
// the document, and the policy meta on the content; initialize says the
// server speaks the extension.
func TestViewResourcesOverMCP(t *testing.T) {
	ts := newTestServer(t, withViews(t))
	_, body := post(t, ts, testToken, initializeWith("2025-11-25", uiCaps), nil)
	if !strings.Contains(body, `"io.modelcontextprotocol/ui"`) {
		t.Errorf("initialize does not name the extension: %s", body)
	}
	base, _ := url.Parse(ts.URL)
	for _, uri := range []string{views.ComposeURI, views.PickURI} {
		read := `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"` + uri + `"}}`
		_, body := post(t, ts, testToken, read, map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
		var res struct {
			Result struct {
				Contents []struct {
					URI, MimeType, Text string
					Meta                struct {
						UI struct {
							CSP views.HostCSP `json:"csp"`
						} `json:"ui"`
					} `json:"_meta"`
				} `json:"contents"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil || len(res.Result.Contents) != 1 {
			t.Fatalf("%s: %v %.300s", uri, err, body)
		}
		c := res.Result.Contents[0]
		if c.URI != uri || c.MimeType != "text/html;profile=mcp-app" || !strings.HasPrefix(c.Text, "<!doctype html>") {
			t.Errorf("%s: %s %s %.40q", uri, c.URI, c.MimeType, c.Text)
		}
		frames := strings.Join(c.Meta.UI.CSP.FrameDomains, " ")
		if uri == views.PickURI && frames != "http://"+base.Host || uri == views.ComposeURI && frames != "" {
			t.Errorf("%s frameDomains %q", uri, frames)
		}
	}
}

// listed reads a tools/list answer's tools by name.
func listed(t *testing.T, body string) map[string]map[string]any {
	t.Helper()
	var res struct {
		Result struct {
			Tools []map[string]any `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatalf("%v: %.300s", err, body)
	}
	out := map[string]map[string]any{}
	for _, tl := range res.Result.Tools {
		if tl["_meta"] == nil {
			tl["_meta"] = map[string]any{}
		}
		out[tl["name"].(string)] = tl
	}
	return out
}
