package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeConfigurationListsEveryFlag: the README's Configuration
// table names every flag `drivemail serve --help` prints, each with the
// environment variable the help gives it, and no flag serve does not
// have; its line on `drivemail emulator` names every emulator flag.
func TestReadmeConfigurationListsEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Configuration\n")
	if !ok {
		t.Fatal("README.md has no Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n## ")

	help := helpFlags(t, "serve")
	table := map[string]string{} // flag → its environment variable, "" for none
	code := regexp.MustCompile("`([^`]+)`|—")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`--") {
			continue
		}
		flags, envs := code.FindAllStringSubmatch(cells[1], -1), code.FindAllStringSubmatch(cells[2], -1)
		if len(flags) != len(envs) {
			t.Errorf("README row %q: %d flags beside %d environment variables", line, len(flags), len(envs))
			continue
		}
		for i, f := range flags {
			table[strings.TrimPrefix(f[1], "--")] = envs[i][1]
		}
	}
	for name, env := range help {
		got, ok := table[name]
		switch {
		case !ok:
			t.Errorf("README's Configuration table lacks --%s (%s)", name, env)
		case got != env:
			t.Errorf("README gives --%s the variable %q; serve --help says %q", name, got, env)
		}
	}
	for name := range table {
		if _, ok := help[name]; !ok {
			t.Errorf("README's Configuration table lists --%s, which serve does not have", name)
		}
	}

	_, line, ok := strings.Cut(section, "`drivemail emulator` runs")
	if !ok {
		t.Fatal("README's Configuration section does not say what `drivemail emulator` takes")
	}
	line, _, _ = strings.Cut(line, ";")
	for name := range helpFlags(t, "emulator") {
		if !strings.Contains(line, "`--"+name+"`") && !strings.Contains(line, "`--"+name+" ") {
			t.Errorf("README's line on drivemail emulator lacks --%s", name)
		}
	}
}

// helpFlags runs `drivemail command --help` and returns each flag it
// lists with the environment variable its usage names in brackets.
func helpFlags(t *testing.T, command string) map[string]string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	_ = run(t.Context(), []string{command, "--help"}, func(string) string { return "" }, &stdout, &stderr)
	flags := map[string]string{}
	name := regexp.MustCompile(`^  -([a-z-]+)`)
	env := regexp.MustCompile(`\[([A-Z_]+)\]`)
	last := ""
	for _, line := range strings.Split(stderr.String(), "\n") {
		if m := name.FindStringSubmatch(line); m != nil {
			last = m[1]
			flags[last] = ""
		} else if m := env.FindStringSubmatch(line); m != nil && last != "" {
			flags[last] = m[1]
		}
	}
	if len(flags) < 5 {
		t.Fatalf("drivemail %s --help listed %d flags:\n%s", command, len(flags), stderr.String())
	}
	return flags
}
