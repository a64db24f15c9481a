package exportfmt

import (
	"strings"
	"testing"
)

func TestTypeQuery(t *testing.T) {
	tests := []struct {
		word   string
		ok     bool
		has    []string
		hasNot []string
	}{
		{"pdf", true, []string{"mimeType = 'application/pdf'"}, nil},
		{"PDFs", true, []string{"mimeType = 'application/pdf'"}, nil},
		{"doc", true, []string{"mimeType = '" + Document + "'", "wordprocessingml"}, []string{"spreadsheet"}},
		{"Document", true, []string{Document}, nil},
		{"sheet", true, []string{Spreadsheet, "spreadsheetml"}, []string{"text/csv"}},
		{"csv", true, []string{"text/csv"}, []string{Spreadsheet}},
		{"spreadsheet", true, []string{Spreadsheet}, nil},
		{"slides", true, []string{Presentation, "presentationml"}, nil},
		{"presentation", true, []string{Presentation}, nil},
		{"image", true, []string{"mimeType contains 'image/'"}, nil},
		{"photos", true, []string{"mimeType contains 'image/'"}, nil},
		{"folder", true, []string{"mimeType = '" + Folder + "'"}, nil},
		{"video", true, []string{"mimeType contains 'video/'"}, nil},
		{"audio", true, []string{"mimeType contains 'audio/'"}, nil},
		{"zip", true, []string{"application/zip", "application/gzip"}, nil},
		{" Google  Doc ", true, []string{Document}, nil},
		{"application/pdf", false, nil, nil},
		{"o'brien", false, nil, nil},
		{"", false, nil, nil},
	}
	for _, tt := range tests {
		q, ok := TypeQuery(tt.word)
		if ok != tt.ok {
			t.Errorf("TypeQuery(%q) ok = %v, want %v", tt.word, ok, tt.ok)
			continue
		}
		if !ok {
			if q != "" {
				t.Errorf("TypeQuery(%q) = %q with ok false", tt.word, q)
			}
			continue
		}
		if !strings.HasPrefix(q, "(") || !strings.HasSuffix(q, ")") {
			t.Errorf("TypeQuery(%q) = %q, not parenthesised", tt.word, q)
		}
		for _, h := range tt.has {
			if !strings.Contains(q, h) {
				t.Errorf("TypeQuery(%q) = %q, lacks %q", tt.word, q, h)
			}
		}
		for _, h := range tt.hasNot {
			if strings.Contains(q, h) {
				t.Errorf("TypeQuery(%q) = %q, has %q", tt.word, q, h)
			}
		}
	}
}

// Every query is built from constants: no quote or backslash can come
// from elsewhere, and every term is well formed.
func TestTypeQueriesAreWellFormed(t *testing.T) {
	for _, w := range TypeWords() {
		q, ok := TypeQuery(w)
		if !ok {
			t.Fatalf("TypeWords lists %q but TypeQuery refuses it", w)
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(q, "("), ")")
		for _, term := range strings.Split(inner, " or ") {
			var val string
			switch {
			case strings.HasPrefix(term, "mimeType = '"):
				val = strings.TrimPrefix(term, "mimeType = '")
			case strings.HasPrefix(term, "mimeType contains '"):
				val = strings.TrimPrefix(term, "mimeType contains '")
			default:
				t.Fatalf("%q: bad term %q", w, term)
			}
			if !strings.HasSuffix(val, "'") || strings.ContainsAny(strings.TrimSuffix(val, "'"), `'\`) || len(val) < 3 {
				t.Fatalf("%q: bad value in %q", w, term)
			}
		}
	}
	for w, canon := range typeSynonyms {
		if _, ok := typeWords[canon]; !ok {
			t.Errorf("synonym %q points at unknown word %q", w, canon)
		}
	}
}
