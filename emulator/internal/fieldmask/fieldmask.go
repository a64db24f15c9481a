// Package fieldmask reads Google's partial-response syntax, the `fields`
// parameter every Google API takes ("files(id,name),nextPageToken",
// "capabilities/canDownload", "*"), and cuts a JSON resource down to it.
package fieldmask

import "errors"

// Mask is a parsed selection: each key names a field and maps to the
// selection inside it, nil meaning the whole field. A nil Mask selects
// everything.
type Mask map[string]Mask

// Bounds on a selection.
const (
	MaxLen   = 8 << 10 // bytes of the fields parameter
	maxDepth = 8       // nested parentheses
)

// ErrSyntax reports a selection that does not parse.
var ErrSyntax = errors.New("fields syntax")

// Parse reads a selection: comma-separated paths, "/" or "." between
// nested names, parentheses for a sub-selection, "*" for every field.
func Parse(s string) (Mask, error) {
	if len(s) > MaxLen {
		return nil, ErrSyntax
	}
	p := &parser{s: s}
	m, err := p.list()
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.i != len(p.s) {
		return nil, ErrSyntax
	}
	return m, nil
}

type parser struct {
	s     string
	i     int
	depth int
}

func (p *parser) skipSpace() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *parser) list() (Mask, error) {
	m := Mask{}
	for {
		if err := p.item(m); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		return m, nil
	}
}

func (p *parser) item(into Mask) error {
	var path []string
	for {
		p.skipSpace()
		start := p.i
		for p.i < len(p.s) && isFieldChar(p.s[p.i]) {
			p.i++
		}
		if p.i == start {
			return ErrSyntax
		}
		path = append(path, p.s[start:p.i])
		if p.i < len(p.s) && (p.s[p.i] == '/' || p.s[p.i] == '.') {
			p.i++
			continue
		}
		break
	}
	var sub Mask
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == '(' {
		p.i++
		if p.depth++; p.depth > maxDepth {
			return ErrSyntax
		}
		var err error
		if sub, err = p.list(); err != nil {
			return err
		}
		p.depth--
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ')' {
			return ErrSyntax
		}
		p.i++
	}
	for i := len(path) - 1; i > 0; i-- {
		sub = Mask{path[i]: sub}
	}
	into.merge(path[0], sub)
	return nil
}

// merge adds key with sub-selection sub; a whole-field selection wins.
func (m Mask) merge(key string, sub Mask) {
	old, ok := m[key]
	switch {
	case !ok:
		m[key] = sub
	case old == nil || sub == nil:
		m[key] = nil
	default:
		for k, v := range sub {
			old.merge(k, v)
		}
	}
}

func isFieldChar(c byte) bool {
	return c == '_' || c == '*' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Apply returns the fields of obj that m selects; a selection inside a
// list applies to each element.
func (m Mask) Apply(obj map[string]any) map[string]any {
	if m == nil {
		return obj
	}
	out := map[string]any{}
	if sub, ok := m["*"]; ok {
		for k, v := range obj {
			out[k] = applyTo(sub, v)
		}
	}
	for k, sub := range m {
		if v, ok := obj[k]; ok && k != "*" {
			out[k] = applyTo(sub, v)
		}
	}
	return out
}

func applyTo(sub Mask, v any) any {
	if sub == nil {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		return sub.Apply(x)
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			out[i] = sub.Apply(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = applyTo(sub, e)
		}
		return out
	default:
		return v
	}
}

// Unknown returns the first top-level name of m outside known, or "".
func (m Mask) Unknown(known map[string]bool) string {
	for k := range m {
		if k != "*" && !known[k] {
			return k
		}
	}
	return ""
}
