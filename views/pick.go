package views

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// pickView is the pick view: drive_pick's link to drivemail's pick page,
// opened by the host in a new tab (ui/open-link), or framed in the view
// where the host lets it frame drivemail's origin. Google's Picker runs
// on that page under its own policy, never in the view, so the view lets
// in drivemail's origin alone, and no Google token passes through the
// host.
func pickView(cfg Config) (View, error) {
	if cfg.BaseURL == nil || cfg.BaseURL.Scheme == "" || cfg.BaseURL.Host == "" {
		return View{}, fmt.Errorf("views: the pick view needs drivemail's public base URL")
	}
	origin := (&url.URL{Scheme: cfg.BaseURL.Scheme, Host: cfg.BaseURL.Host}).String()
	prefix := strings.TrimSuffix(cfg.BaseURL.String(), "/") + "/pick/"
	html, err := assemble(page{
		file: "pick.html", scripts: []string{"bridge.js", "pick.js"},
		sources: map[string][]string{"frame-src": {origin}},
		data:    map[string]string{"pickPrefix": prefix},
	})
	if err != nil {
		return View{}, err
	}
	return View{
		URI: PickURI, Name: "pick", Title: "Choose Drive files",
		Description: "drive_pick's link to Google's file picker, to open in a new tab or, where the host allows, here.",
		HTML:        html,
		CSP:         HostCSP{ConnectDomains: []string{}, ResourceDomains: []string{}, FrameDomains: []string{origin}, BaseURIDomains: []string{}},
	}, nil
}

// dataScript declares the values a view's script reads, as one constant
// of JSON literals (which escape <, > and &, so no value can end the
// script element).
func dataScript(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("const VIEW_DATA = Object.freeze({")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(data[k])
		b.Write(kj)
		b.WriteString(": ")
		b.Write(vj)
	}
	b.WriteString("});\n")
	return b.String()
}
