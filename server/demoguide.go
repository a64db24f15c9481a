package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/drivemail/drivemail/emulator"
)

// demoGuide is what `serve --demo` prints after `listening on`: where
// everything is and lines to paste into another shell to connect a client
// and send a message.
type demoGuide struct {
	Base      *url.URL // drivemail's public origin
	Emulator  string   // the emulator's origin
	Token     string   // DEMO_TOKEN
	TokenTTL  time.Duration
	User      string // the demo user, whom the emulated Google signs in
	FileID    string // a seeded PDF to attach in the example send ("" when none)
	FileName  string
	Inspector string // how to run the MCP Inspector
	Upload    string // absolute path of a file for the curl upload line
	// FileMode: --drive-scope file, where drivemail sees no file of the
	// demo Drive until the user picks it.
	FileMode bool
}

// inspectorCommand runs the MCP Inspector with npx. The Inspector needs
// Node.js 22, so npx fetches Node 22 beside it (as e2e/ pins it) and runs
// it there; any npm will do, and --loglevel=error keeps npm's engine
// warnings about the Node that runs npx itself off the screen.
const inspectorCommand = "npx --loglevel=error -y -p node@22 -p @modelcontextprotocol/inspector@2.12.0 inspector"

// guide describes the running demo.
func (d *demoGoogle) guide(base *url.URL, token string, fileMode bool) demoGuide {
	g := demoGuide{
		Base: base, Emulator: d.url, Token: token, TokenTTL: demoTokenTTL,
		User: emulator.DemoUser, Inspector: inspectorCommand, Upload: d.sample, FileMode: fileMode,
	}
	for _, f := range d.emu.Drive().Files(emulator.DemoUser) {
		if f.MimeType == "application/pdf" && !f.Trashed {
			g.FileID, g.FileName = f.ID, f.Name
			break
		}
	}
	return g
}

// write prints the guide.
func (g demoGuide) write(w io.Writer) {
	mcp := g.Base.String() + "/mcp"
	auth := fmt.Sprintf(`--header "Authorization: Bearer %s"`, g.Token)
	cli := fmt.Sprintf("%s --cli %s --transport http %s", g.Inspector, mcp, auth)

	var b strings.Builder
	fmt.Fprintf(&b, "\ndrivemail demo: Google is played by an in-process emulator, seeded with sample files for %s.\n", g.User)
	fmt.Fprintf(&b, "Nothing leaves this machine; no Google account or credentials are needed.\n\n")
	fmt.Fprintf(&b, "  MCP endpoint  %s\n", mcp)
	fmt.Fprintf(&b, "  Sent mail     %s/_emulator/outbox  (open it in a browser)\n", g.Emulator)
	fmt.Fprintf(&b, "  Access token  the DEMO_TOKEN above, valid for %s; or sign in with OAuth: the emulator's consent page stands in for Google's (%s is preselected: press Allow)\n", humanTTL(g.TokenTTL), g.User)
	fmt.Fprintf(&b, "\nIn another shell:\n\n")
	fmt.Fprintf(&b, "MCP Inspector, command line (needs npm; the first run fetches the Inspector and Node.js 22): the tools, every file in the demo Drive with its id, and a send:\n")
	fmt.Fprintf(&b, "  %s --method tools/list\n", cli)
	fmt.Fprintf(&b, "  %s --method tools/call --tool-name drive_search --tool-args-json '{\"query\":\"\"}'\n", cli)
	if g.FileMode {
		fmt.Fprintf(&b, "  %s --method tools/call --tool-name drive_pick --tool-args-json '{}'\n", cli)
		fmt.Fprintf(&b, "  (--drive-scope file: drivemail sees no file until one is picked; open the link it answers in a browser,\n")
		fmt.Fprintf(&b, "   choose files in the emulator's picker, and drive_search lists them, to send by id)\n")
	} else if g.FileID != "" {
		args, _ := json.Marshal(map[string]any{
			"to":          "ana@example.com",
			"subject":     "Sent from the drivemail demo",
			"body_text":   "The file is attached.",
			"attachments": []string{g.FileID},
		})
		fmt.Fprintf(&b, "  %s --method tools/call --tool-name send_email --tool-args-json '%s'\n", cli, args)
		fmt.Fprintf(&b, "  (%s is %q; put other ids from drive_search in \"attachments\")\n", g.FileID, g.FileName)
	}
	fmt.Fprintf(&b, "  %s --method tools/call --tool-name search_mail --tool-args-json '{\"query\":\"has:attachment\"}'\n", cli)
	fmt.Fprintf(&b, "  (the demo inbox: a message id goes in a send's \"reply_to\" or \"forward\", or in save_to_drive with an attachment's name)\n")
	fmt.Fprintf(&b, "\nMCP Inspector, web UI (leave out --header to sign in with OAuth instead):\n  %s --web --transport http --server-url %s %s\n", g.Inspector, mcp, auth)
	fmt.Fprintf(&b, "\nClaude Code:\n  claude mcp add --transport http drivemail %s %s\n", mcp, auth)
	fmt.Fprintf(&b, "\nPut a local file into the demo Drive (the answer has its file_id; give any file's path after @):\n  curl -H \"Authorization: Bearer %s\" -F file=@%s %s/upload\n\n", g.Token, shellQuote(g.Upload), g.Base)
	_, _ = io.WriteString(w, b.String())
}

// shellQuote quotes a path for a POSIX shell when it needs quoting.
func shellQuote(p string) string {
	if p != "" && strings.IndexFunc(p, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%", r))
	}) < 0 {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// humanTTL says 12h as "12 hours".
func humanTTL(d time.Duration) string {
	switch {
	case d == time.Hour:
		return "1 hour"
	case d > time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return d.String()
}
