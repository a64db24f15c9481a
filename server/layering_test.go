package server

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// layers is the whole arrow set of docs/architecture.md: for each of the
// module's packages (by path, a trailing "/…" for a tree), the module
// packages its non-test code may import. A package not listed, or an
// import not listed for it, fails the test: a new arrow is a decision to
// write down here and in the architecture page.
var layers = map[string][]string{
	"cmd/drivemail": {"server", "clientfile", "compose", "oauth", "emulator"},
	"server": {"tools", "account", "clientfile", "compose", "upload", "pick", "drive", "gmail", "oauth", "oauth/googleauth", "oauth/keyring",
		"store", "store/backend", "emulator", "emulator/demoseed",
		"internal/ask", "internal/google", "internal/identity", "internal/metrics", "internal/refusal", "internal/safedial",
		"prepared", "views"},
	// The tools, compose and upload are handed the caller as their
	// account: none of them may read the identity in a context.
	"tools": {"account", "compose", "upload", "pick", "drive", "gmail", "exportfmt", "handle", "prepared", "views",
		"internal/ask", "internal/ignorable", "internal/redact", "internal/refusal"},
	"upload":  {"account", "clientfile", "drive", "exportfmt", "handle", "oauth/googleauth", "store", "internal/google", "internal/refusal", "internal/stream"},
	"compose": {"account", "drive", "gmail", "mimemsg", "blocked", "clientfile", "exportfmt", "handle", "internal/google", "internal/redact", "internal/refusal"},
	// account is the one door to a user's Google account: who they are
	// and their Drive and Gmail clients.
	"account": {"drive", "gmail", "internal/google", "internal/identity"},
	// pick is the page drive_pick's links open: Google's Picker, and the
	// choice it posts, read again through the ticket's user's account.
	"pick":                {"account", "drive", "oauth/keyring", "store", "internal/google", "internal/refusal"},
	"account/accounttest": {"account", "emulator/emutest", "internal/identity"},
	"handle":              {"drive"},
	// views are the MCP App documents and what says a host renders them;
	// prepared keeps a message the compose view shows until its user's word.
	"views":    {},
	"prepared": {"oauth/keyring"},
	// clientfile fetches files a chat client hands over by signed URL.
	"clientfile":                {"internal/refusal", "internal/safedial", "internal/stream"},
	"clientfile/clientfiletest": {"clientfile", "internal/memnet", "internal/safedial"},
	"drive":                     {"exportfmt", "internal/google", "internal/stream"},
	"gmail":                     {"internal/google", "internal/stream"},
	"mimemsg":                   {},
	"blocked":                   {"internal/stream"},
	"exportfmt":                 {},

	"oauth":            {"oauth/cimd", "oauth/googleauth", "oauth/keyring", "store", "internal/identity", "internal/ignorable"},
	"oauth/cimd":       {"internal/safedial"},
	"oauth/googleauth": {"oauth/keyring", "store", "internal/google", "internal/refusal"},
	"oauth/keyring":    {},

	"store":                   {},
	"store/backend":           {"store", "store/sqlite", "store/postgres"},
	"store/sqlite":            {"store", "store/internal/sqlstore"},
	"store/postgres":          {"store", "store/internal/sqlstore"},
	"store/internal/sqlstore": {"store"},
	"store/storetest":         {"store", "store/sqlite", "store/postgres"},

	// The leaves: imported by many, importing nothing of the module.
	"internal/ask":       {},
	"internal/doctest":   {},
	"internal/google":    {},
	"internal/identity":  {},
	"internal/ignorable": {},
	"internal/logtest":   {},
	"internal/memnet":    {},
	"internal/metrics":   {},
	"internal/redact":    {},
	"internal/refusal":   {},
	"internal/safedial":  {},
	"internal/stream":    {},

	// The emulator stands apart: the product imports it only to run
	// --demo, and it imports nothing of the product.
	"emulator":   {"emulator/…"},
	"emulator/…": {"emulator/…"},
	// emutest starts an emulator for the product's tests, with the
	// product's view of its endpoints.
	"emulator/emutest": {"emulator", "emulator/…", "internal/google", "internal/memnet"},

	// Tools around the product, which drive it as a client would.
	"bench/…":            {"bench/…", "emulator", "emulator/…", "internal/…", "account", "account/accounttest", "clientfile", "compose", "drive", "gmail", "handle", "mimemsg", "internal/google", "oauth/googleauth", "store", "store/storetest"},
	"e2e/…":              {"e2e/…", "emulator", "emulator/…", "internal/…"},
	"e2e":                {"emulator", "internal/…", "server"},
	"deploy/healthcheck": {},
}

// TestImportsFollowTheArchitecture walks the module and holds every
// package's imports to layers.
func TestImportsFollowTheArchitecture(t *testing.T) {
	const module = "github.com/drivemail/drivemail/"
	root := filepath.Join("..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		allowed, ok := layerOf(rel)
		if !ok {
			t.Errorf("package %s is not in the layering table: add it (and its arrows) to layers and to docs/architecture.md", rel)
			return nil
		}
		checked++
		for _, imp := range pkg.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			if !permitted(allowed, dep) {
				t.Errorf("%s imports %s, which its layer does not allow (it may import %v)", rel, dep, sorted(allowed))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 30 {
		t.Fatalf("checked only %d packages; is the walk reading the module?", checked)
	}
}

// layerOf finds pkg's entry: its own, or that of the nearest tree.
func layerOf(pkg string) ([]string, bool) {
	if allowed, ok := layers[pkg]; ok {
		return allowed, true
	}
	for p := pkg; strings.Contains(p, "/"); {
		p = p[:strings.LastIndex(p, "/")]
		if allowed, ok := layers[p+"/…"]; ok {
			return allowed, true
		}
	}
	return nil, false
}

// permitted reports whether dep matches an entry of allowed (a "/…"
// entry matches the tree below it).
func permitted(allowed []string, dep string) bool {
	for _, a := range allowed {
		if tree, ok := strings.CutSuffix(a, "/…"); ok && strings.HasPrefix(dep, tree+"/") || a == dep {
			return true
		}
	}
	return false
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// TestLayeringTableCatchesAWrongArrow: the check itself, on an arrow the
// architecture forbids (drive importing compose) and one it allows.
func TestLayeringTableCatchesAWrongArrow(t *testing.T) {
	cases := []struct {
		pkg, dep string
		want     bool
	}{
		{"drive", "compose", false},
		{"drive", "internal/google", true},
		{"compose", "tools", false},
		{"tools", "server", false},
		{"emulator/drivesvc", "emulator/internal/core", true},
		{"emulator/drivesvc", "drive", false},
		{"internal/refusal", "compose", false},
		{"compose", "internal/identity", false},
		{"tools", "internal/identity", false},
		{"upload", "internal/identity", false},
		{"account", "compose", false},
	}
	for _, c := range cases {
		allowed, ok := layerOf(c.pkg)
		if !ok {
			t.Fatalf("%s has no layer", c.pkg)
		}
		if got := permitted(allowed, c.dep); got != c.want {
			t.Errorf("%s → %s permitted = %v, want %v", c.pkg, c.dep, got, c.want)
		}
	}
}
