package redact

import "testing"

func TestQuoted(t *testing.T) {
	cases := map[string]string{
		"":                          "",
		"no quotes":                 "no quotes",
		`open "a.pdf": EOF`:         `open "…": EOF`,
		`"a" and "b"`:               `"…" and "…"`,
		`q "a \"b\" c" end`:         `q "…" end`,
		`back "a\\" end "b"`:        `back "…" end "…"`,
		`cut "never closed: secret`: `cut "…"`,
		`non-ASCII "résumé.pdf" ok`: `non-ASCII "…" ok`,
	}
	for in, want := range cases {
		if got := Quoted(in); got != want {
			t.Errorf("Quoted(%q) = %q, want %q", in, got, want)
		}
	}
}
