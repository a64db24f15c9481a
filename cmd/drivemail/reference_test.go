package main

import (
	"flag"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/clientfile"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/doctest"
	"github.com/drivemail/drivemail/mimemsg"
	"github.com/drivemail/drivemail/server"
	"github.com/drivemail/drivemail/upload"
)

var update = flag.Bool("update", false, "rewrite the parts of docs/reference.md and README.md made from the definitions")

// rerun is how each part below is rewritten.
const rerun = "go test ./cmd/drivemail -run TestReferenceIsCurrent -update"

// The parts made here: the commands, each command's flags (in the
// reference and, for serve, in the README), and the limits.
var (
	referenceCommands = part("../../docs/reference.md", "commands", "the command's usage text")
	referenceServe    = part("../../docs/reference.md", "serve flags", "serve's flag definitions")
	referenceEmulator = part("../../docs/reference.md", "emulator flags", "the emulator's flag definitions")
	referenceLimits   = part("../../docs/reference.md", "limits", "the limits' constants")
	referenceUpload   = part("../../docs/reference.md", "upload answer", "upload.Result")
	readmeServe       = part("../../README.md", "serve flags", "serve's flag definitions")
)

func part(path, name, source string) doctest.Part {
	return doctest.Part{
		Path:  path,
		Start: fmt.Sprintf("<!-- %s: made from %s; %s -->", name, source, rerun),
		End:   "<!-- end of " + name + " -->",
	}
}

// TestReferenceIsCurrent compares the parts of docs/reference.md (and
// the README's flag table) made from the code with what the code makes
// now: a flag, default or limit changed without its docs fails here.
func TestReferenceIsCurrent(t *testing.T) {
	referenceCommands.Check(t, "```\n"+usage+"```\n", *update)

	serve := flag.NewFlagSet("serve", flag.ContinueOnError)
	if _, err := serveFlags(serve, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	serveTable := flagTable(serve)
	referenceServe.Check(t, serveTable, *update)
	readmeServe.Check(t, serveTable, *update)

	emu := flag.NewFlagSet("emulator", flag.ContinueOnError)
	if _, err := emulatorFlags(emu, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	referenceEmulator.Check(t, flagTable(emu), *update)
	referenceLimits.Check(t, limitsTable(), *update)
	referenceUpload.Check(t, jsonFields(reflect.TypeFor[upload.Result]()), *update)
}

// jsonFields is the table of a struct's JSON fields and their types.
func jsonFields(typ reflect.Type) string {
	var b strings.Builder
	b.WriteString("| field | type |\n|---|---|\n")
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		kind := f.Type.Kind().String()
		if f.Type.Kind() == reflect.Int64 {
			kind = "integer"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", name, kind)
	}
	return b.String()
}

var (
	envInUsage     = regexp.MustCompile(` \[([A-Z0-9_]+)\]$`)
	defaultInUsage = regexp.MustCompile(` ?\(default ([^)]*)\)`)
)

// flagTable is the Markdown table of a command's flags: name, the
// environment variable its usage names in brackets, its default (or the
// one its usage states, for a default that is not a value), and meaning.
func flagTable(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| flag | environment | default | meaning |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *flag.Flag) {
		meaning, env := f.Usage, "—"
		if m := envInUsage.FindStringSubmatch(meaning); m != nil {
			env, meaning = "`"+m[1]+"`", strings.TrimSuffix(meaning, m[0])
		}
		def := defaultText(f)
		if m := defaultInUsage.FindStringSubmatch(meaning); m != nil {
			def, meaning = m[1], strings.Replace(meaning, m[0], "", 1)
		}
		if def == "" {
			def = "none"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", f.Name, env, cell(def), cell(meaning))
	})
	return b.String()
}

// defaultText is a flag's default as a user would write it.
func defaultText(f *flag.Flag) string {
	switch v := f.Value.(type) {
	case flag.Getter:
		switch d := v.Get().(type) {
		case time.Duration:
			return "`" + shortDuration(d) + "`"
		case int64:
			if strings.HasSuffix(f.Name, "-bytes") && d >= 1<<20 {
				return fmt.Sprintf("`%d` (%s)", d, bytesText(d))
			}
		case bool:
			return fmt.Sprint(d)
		}
	}
	if f.DefValue == "" {
		return ""
	}
	return "`" + f.DefValue + "`"
}

// shortDuration writes 2m0s as 2m and 1h0m0s as 1h.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// bytesText writes a whole number of MiB or GiB.
func bytesText(n int64) string {
	if n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// limitsTable is every limit a user or operator meets, each value read
// from the constant the code enforces.
func limitsTable() string {
	size := func(n int64) string { return fmt.Sprintf("%d bytes (%s)", n, bytesText(n)) }
	rows := [][2]string{
		{"files attached or inline in one message", fmt.Sprint(compose.MaxFiles)},
		{"entries in `attachments` (files, and files sent as links)", fmt.Sprint(compose.MaxEntries)},
		{"attached and inline file bytes of one message, before encoding; refused before any download where Drive knows the sizes, counted as they stream for exports", size(compose.MaxAttachmentBytes)},
		{"the encoded message (Gmail's upload limit)", size(compose.MaxMessageBytes)},
		{"`body_text`, and `body_html`, each", size(compose.MaxBodyBytes)},
		{"content written into one call (`text`, `base64`, `content`, `data:` URIs), summed", size(compose.MaxModelBytes)},
		{"recipients (`to`, `cc` and `bcc` together)", fmt.Sprint(mimemsg.DefaultMaxRecipients)},
		{"subject", fmt.Sprintf("%d characters", mimemsg.MaxSubjectChars)},
		{"`references` entries", fmt.Sprint(compose.MaxReferenceEntries)},
		{"one MCP request", size(server.DefaultMaxMCPBodyBytes)},
		{"`drive_search` results per page", fmt.Sprintf("%d (default %d)", drive.MaxPageSize, drive.DefaultPageSize)},
		{"a Drive download or export that sends nothing (`--drive-idle-timeout`)", shortDuration(drive.DefaultIdleTimeout)},
		{"a file a chat client hands over: all of it, and its host's longest silence", fmt.Sprintf("%s; %s", shortDuration(clientfile.DefaultMaxDuration), shortDuration(clientfile.DefaultIdleTimeout))},
		{"a file's upload (`--max-upload-bytes`)", size(upload.DefaultMaxBytes)},
		{"a `request_upload` URL: used once, within", shortDuration(upload.DefaultTicketTTL)},
		{"uploads per user (`request_upload` URLs: twice as many)", fmt.Sprintf("%d per %s", upload.DefaultRatePerWindow, shortDuration(upload.DefaultRateWindow))},
		{"an upload: its client's longest silence, and all of it", fmt.Sprintf("%s; %s", shortDuration(upload.DefaultIdleTimeout), shortDuration(upload.DefaultMaxDuration))},
		{"a send's wait for its turn (`--send-queue-timeout`)", shortDuration(compose.DefaultSendQueueTimeout)},
		{"a file-transfer upload (`--file-transfer`) stays attachable for", shortDuration(upload.DefaultTransferTTL)},
	}
	var b strings.Builder
	b.WriteString("| limit | value |\n|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s |\n", r[0], r[1])
	}
	return b.String()
}

// cell makes text fit one Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
