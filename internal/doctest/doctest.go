// Package doctest keeps the parts of the docs that are made from the code
// in step with it. A test renders a part; Section compares it with the
// text between the part's two marker lines in a Markdown file, and with
// -update rewrites it there, so a stale part fails the test and the fix
// is one command. Only tests import it.
package doctest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Part is one generated part of a Markdown file: the text between the
// line Start and the line End.
type Part struct {
	Path  string // the Markdown file, relative to the test's package
	Start string // the marker line before the part, naming how to rewrite it
	End   string // the marker line after it
}

// Check fails t when the part differs from want; with update it writes
// want there instead.
func (p Part) Check(t testing.TB, want string, update bool) {
	t.Helper()
	b, err := os.ReadFile(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	got, replaced, err := p.replace(string(b), want)
	if err != nil {
		t.Fatal(err)
	}
	if got == want {
		return
	}
	if update {
		if err := os.WriteFile(p.Path, []byte(replaced), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the part after %q is stale; rewrite it with the command the marker names\ngot:\n%s\nwant:\n%s", p.Path, p.Start, got, want)
}

// replace returns the part as doc has it, and doc with want in its place.
func (p Part) replace(doc, want string) (got, replaced string, err error) {
	head, rest, ok := strings.Cut(doc, p.Start+"\n")
	if !ok {
		return "", "", fmt.Errorf("%s lacks the line %q", p.Path, p.Start)
	}
	got, tail, ok := strings.Cut(rest, p.End)
	if !ok {
		return "", "", fmt.Errorf("%s lacks the line %q after %q", p.Path, p.End, p.Start)
	}
	return got, head + p.Start + "\n" + want + p.End + tail, nil
}
