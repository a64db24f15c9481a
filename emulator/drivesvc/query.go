package drivesvc

import (
	"errors"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The files.list q grammar the emulator understands (Google's "Search for
// files and folders" subset drivemail and most clients use):
//
//	query   = or
//	or      = and { "or" and }
//	and     = unary { "and" unary }
//	unary   = "not" unary | "(" or ")" | term
//	term    = field op value | value "in" ("parents" | "owners" | "writers" | "readers")
//	value   = 'single-quoted' (with \' and \\) | true | false
//
// Fields and their operators: name (contains = !=), fullText (contains),
// mimeType (contains = !=), modifiedTime and createdTime (< <= = != > >=,
// RFC 3339), trashed, starred, sharedWithMe (= !=, true/false). Keywords
// are case-insensitive. Anything else is Google's 400 "Invalid Value".

// errQuery is every q syntax or semantic error; the handler answers Google's 400.
var errQuery = errors.New("invalid query")

type tokenKind int

const (
	tokWord tokenKind = iota
	tokString
	tokOp
	tokLParen
	tokRParen
)

type token struct {
	kind tokenKind
	text string
}

func tokenize(q string) ([]token, error) {
	var toks []token
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(':
			toks = append(toks, token{tokLParen, "("})
			i++
		case c == ')':
			toks = append(toks, token{tokRParen, ")"})
			i++
		case c == '\'':
			var b strings.Builder
			i++
			closed := false
			for i < len(q) {
				if q[i] == '\\' {
					if i+1 >= len(q) || (q[i+1] != '\'' && q[i+1] != '\\') {
						return nil, errQuery
					}
					b.WriteByte(q[i+1])
					i += 2
					continue
				}
				if q[i] == '\'' {
					closed = true
					i++
					break
				}
				b.WriteByte(q[i])
				i++
			}
			if !closed {
				return nil, errQuery
			}
			toks = append(toks, token{tokString, b.String()})
		case c == '=' || c == '<' || c == '>' || c == '!':
			op := string(c)
			if i+1 < len(q) && q[i+1] == '=' {
				op += "="
			}
			if op == "!" {
				return nil, errQuery
			}
			toks = append(toks, token{tokOp, op})
			i += len(op)
		default:
			r, _ := utf8.DecodeRuneInString(q[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
				return nil, errQuery
			}
			start := i
			for i < len(q) {
				r, size := utf8.DecodeRuneInString(q[i:])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
					break
				}
				i += size
			}
			toks = append(toks, token{tokWord, q[start:i]})
		}
	}
	return toks, nil
}

// expr is a parsed query node.
type expr interface {
	eval(f *file, env *queryEnv) bool
}

type andExpr struct{ l, r expr }
type orExpr struct{ l, r expr }
type notExpr struct{ e expr }

func (e andExpr) eval(f *file, env *queryEnv) bool { return e.l.eval(f, env) && e.r.eval(f, env) }
func (e orExpr) eval(f *file, env *queryEnv) bool  { return e.l.eval(f, env) || e.r.eval(f, env) }
func (e notExpr) eval(f *file, env *queryEnv) bool { return !e.e.eval(f, env) }

// queryEnv is what terms compare against besides the file.
type queryEnv struct {
	me     string
	root   string
	drives map[string]*sharedDrive
}

type queryParser struct {
	toks     []token
	i        int
	depth    int
	fullText bool
}

// parseQuery parses q; fullText reports a fullText term (which forbids orderBy).
func parseQuery(q string) (e expr, fullText bool, err error) {
	if strings.TrimSpace(q) == "" {
		return nil, false, nil
	}
	toks, err := tokenize(q)
	if err != nil {
		return nil, false, err
	}
	p := &queryParser{toks: toks}
	e, err = p.or()
	if err != nil {
		return nil, false, err
	}
	if p.i != len(p.toks) {
		return nil, false, errQuery
	}
	return e, p.fullText, nil
}

func (p *queryParser) peek() (token, bool) {
	if p.i >= len(p.toks) {
		return token{}, false
	}
	return p.toks[p.i], true
}

func (p *queryParser) next() (token, bool) {
	t, ok := p.peek()
	if ok {
		p.i++
	}
	return t, ok
}

func (p *queryParser) keyword(word string) bool {
	t, ok := p.peek()
	if ok && t.kind == tokWord && strings.EqualFold(t.text, word) {
		p.i++
		return true
	}
	return false
}

func (p *queryParser) or() (expr, error) {
	e, err := p.and()
	for err == nil && p.keyword("or") {
		var r expr
		if r, err = p.and(); err == nil {
			e = orExpr{e, r}
		}
	}
	return e, err
}

func (p *queryParser) and() (expr, error) {
	e, err := p.unary()
	for err == nil && p.keyword("and") {
		var r expr
		if r, err = p.unary(); err == nil {
			e = andExpr{e, r}
		}
	}
	return e, err
}

func (p *queryParser) unary() (expr, error) {
	if p.depth++; p.depth > 100 {
		return nil, errQuery
	}
	defer func() { p.depth-- }()
	if p.keyword("not") {
		e, err := p.unary()
		return notExpr{e}, err
	}
	if t, ok := p.peek(); ok && t.kind == tokLParen {
		p.i++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if t, ok := p.next(); !ok || t.kind != tokRParen {
			return nil, errQuery
		}
		return e, nil
	}
	return p.term()
}

func (p *queryParser) term() (expr, error) {
	t, ok := p.next()
	if !ok {
		return nil, errQuery
	}
	if t.kind == tokString {
		if !p.keyword("in") {
			return nil, errQuery
		}
		field, ok := p.next()
		if !ok || field.kind != tokWord {
			return nil, errQuery
		}
		switch field.text {
		case "parents", "owners", "writers", "readers":
			return inTerm{value: t.text, field: field.text}, nil
		}
		return nil, errQuery
	}
	if t.kind != tokWord {
		return nil, errQuery
	}
	field := t.text
	var op string
	if p.keyword("contains") {
		op = "contains"
	} else if o, ok := p.next(); ok && o.kind == tokOp {
		op = o.text
	} else {
		return nil, errQuery
	}
	val, ok := p.next()
	if !ok {
		return nil, errQuery
	}
	switch field {
	case "name", "mimeType":
		if val.kind != tokString || !slices.Contains([]string{"contains", "=", "!="}, op) {
			return nil, errQuery
		}
		return stringTerm{field, op, val.text}, nil
	case "fullText":
		if val.kind != tokString || op != "contains" {
			return nil, errQuery
		}
		p.fullText = true
		return stringTerm{field, op, val.text}, nil
	case "modifiedTime", "createdTime":
		if val.kind != tokString || op == "contains" {
			return nil, errQuery
		}
		at, err := parseQueryTime(val.text)
		if err != nil {
			return nil, err
		}
		return timeTerm{field, op, at}, nil
	case "trashed", "starred", "sharedWithMe":
		b, isBool := boolWord(val)
		if !isBool || (op != "=" && op != "!=") {
			return nil, errQuery
		}
		return boolTerm{field, op == "!=", b}, nil
	}
	return nil, errQuery
}

func boolWord(t token) (value, ok bool) {
	if t.kind != tokWord {
		return false, false
	}
	switch strings.ToLower(t.text) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// parseQueryTime reads RFC 3339, with UTC when no zone is given.
func parseQueryTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, errQuery
}

type stringTerm struct{ field, op, value string }

func (t stringTerm) eval(f *file, _ *queryEnv) bool {
	switch t.field {
	case "name":
		switch t.op {
		case "=":
			return f.name == t.value
		case "!=":
			return f.name != t.value
		}
		return wordPrefix(strings.ToLower(f.name), strings.ToLower(t.value))
	case "mimeType":
		switch t.op {
		case "=":
			return f.mimeType == t.value
		case "!=":
			return f.mimeType != t.value
		}
		return strings.Contains(f.mimeType, t.value)
	}
	v := strings.ToLower(t.value)
	return wordPrefix(strings.ToLower(f.name), v) || wordPrefix(strings.ToLower(f.description), v) || wordPrefix(f.index, v)
}

// wordPrefix reports whether needle occurs in hay starting at a word
// boundary: Drive's "contains" matches prefixes of words, so
// name contains 'Hello' finds "HelloWorld" but 'World' does not.
func wordPrefix(hay, needle string) bool {
	if needle == "" {
		return true
	}
	first, _ := utf8.DecodeRuneInString(needle)
	wordStartOnly := isWordRune(first)
	for from := 0; from <= len(hay); {
		i := strings.Index(hay[from:], needle)
		if i < 0 {
			return false
		}
		at := from + i
		prev, _ := utf8.DecodeLastRuneInString(hay[:at])
		if !wordStartOnly || at == 0 || !isWordRune(prev) {
			return true
		}
		_, size := utf8.DecodeRuneInString(hay[at:])
		from = at + size
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

type timeTerm struct {
	field string
	op    string
	at    time.Time
}

func (t timeTerm) eval(f *file, _ *queryEnv) bool {
	v := f.modified
	if t.field == "createdTime" {
		v = f.created
	}
	switch t.op {
	case "<":
		return v.Before(t.at)
	case "<=":
		return !v.After(t.at)
	case ">":
		return v.After(t.at)
	case ">=":
		return !v.Before(t.at)
	case "=":
		return v.Equal(t.at)
	case "!=":
		return !v.Equal(t.at)
	}
	return false
}

type boolTerm struct {
	field  string
	negate bool
	value  bool
}

func (t boolTerm) eval(f *file, env *queryEnv) bool {
	var v bool
	switch t.field {
	case "trashed":
		v = f.trashed
	case "sharedWithMe":
		v = f.owner != env.me && f.sharedWithUser(env.me)
	}
	return (v == t.value) != t.negate
}

type inTerm struct{ value, field string }

func (t inTerm) eval(f *file, env *queryEnv) bool {
	who := strings.ToLower(t.value)
	if who == "me" {
		who = env.me
	}
	member := func() bool { d := env.drives[f.driveID]; return d != nil && d.members[who] }
	switch t.field {
	case "parents":
		p := t.value
		if p == "root" {
			p = env.root
		}
		return slices.Contains(f.parents, p)
	case "owners":
		return f.owner != "" && f.owner == who
	case "writers":
		return f.owner == who || member() || f.sharedWithUser(who) && roleRank[f.roleOf(who)] >= roleRank["writer"]
	default: // readers
		return f.owner == who || member() || f.sharedWithUser(who)
	}
}
