package ignorable_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode"

	"github.com/drivemail/drivemail/internal/ignorable"
)

// definition builds the property the way DerivedCoreProperties.txt
// states it, as set operations over the unicode package's range tables
// (a different road from the package's rune-by-rune walk).
func definition() map[rune]bool {
	set := map[rune]bool{}
	each := func(t *unicode.RangeTable, f func(rune)) {
		for _, r := range t.R16 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				f(c)
			}
		}
		for _, r := range t.R32 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				f(c)
			}
		}
	}
	add := func(c rune) { set[c] = true }
	remove := func(c rune) { delete(set, c) }
	each(unicode.Other_Default_Ignorable_Code_Point, add)
	each(unicode.Cf, add)
	each(unicode.Variation_Selector, add)
	each(unicode.White_Space, remove)
	for c := rune(0xFFF9); c <= 0xFFFB; c++ {
		remove(c)
	}
	for c := rune(0x13430); c <= 0x1343F; c++ {
		remove(c)
	}
	each(unicode.Prepended_Concatenation_Mark, remove)
	return set
}

// TestTheWholeCodeSpaceFollowsTheDefinition walks every code point.
func TestTheWholeCodeSpaceFollowsTheDefinition(t *testing.T) {
	want := definition()
	wrong := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if ignorable.Is(r) != want[r] {
			if wrong++; wrong <= 10 {
				t.Errorf("Is(%U) = %v, the definition says %v", r, ignorable.Is(r), want[r])
			}
		}
	}
	if wrong > 10 {
		t.Errorf("… %d code points in all", wrong)
	}
}

// TestKnownRows: the rows of DerivedCoreProperties.txt everyone knows,
// each whole and with its neighbours outside, and characters that look
// invisible but are not in the property (spaces, separators, the
// interlinear annotations, Egyptian format controls, prepended marks).
func TestKnownRows(t *testing.T) {
	rows := []struct {
		lo, hi rune
		what   string
	}{
		{0x00AD, 0x00AD, "soft hyphen"},
		{0x034F, 0x034F, "combining grapheme joiner"},
		{0x061C, 0x061C, "Arabic letter mark"},
		{0x115F, 0x1160, "Hangul fillers"},
		{0x17B4, 0x17B5, "Khmer inherent vowels"},
		{0x180B, 0x180F, "Mongolian free variation selectors and vowel separator"},
		{0x200B, 0x200F, "zero-width space, non-joiner, joiner, LRM, RLM"},
		{0x202A, 0x202E, "bidi embeddings and overrides"},
		{0x2060, 0x206F, "word joiner, invisible operators, bidi isolates"},
		{0x3164, 0x3164, "Hangul filler"},
		{0xFE00, 0xFE0F, "variation selectors 1-16"},
		{0xFEFF, 0xFEFF, "zero-width no-break space"},
		{0xFFA0, 0xFFA0, "halfwidth Hangul filler"},
		{0xFFF0, 0xFFF8, "unassigned specials"},
		{0x1BCA0, 0x1BCA3, "shorthand format controls"},
		{0x1D173, 0x1D17A, "musical symbol format controls"},
		{0xE0000, 0xE0FFF, "tags, variation selectors 17-256, reserved"},
	}
	for _, row := range rows {
		for r := row.lo; r <= row.hi; r++ {
			if !ignorable.Is(r) {
				t.Errorf("%U (%s) is not default-ignorable", r, row.what)
			}
		}
	}
	for _, r := range []rune{'A', ' ', 0x00A0, 0x034E, 0x1160 + 1, 0x180A, 0x1810, 0x200A, 0x2010, 0x2028, 0x2029,
		0x202F, 0x205F, 0x2070, 0xFDFF, 0xFE10, 0xFFF9, 0xFFFA, 0xFFFB, 0x13430, 0x1343F, 0x0600, 0x06DD, 0x110BD, 0xDFFFF, 0xE1000} {
		if ignorable.Is(r) {
			t.Errorf("%U is not default-ignorable, but Is says it is", r)
		}
	}
	// For the Unicode version of Go 1.26 the property is exactly these
	// rows: the published list, row for row.
	if unicode.Version == "15.0.0" {
		var got []string
		for _, r := range ignorable.Table().R16 {
			got = append(got, span(rune(r.Lo), rune(r.Hi)))
		}
		for _, r := range ignorable.Table().R32 {
			got = append(got, span(rune(r.Lo), rune(r.Hi)))
		}
		var want []string
		for _, row := range rows {
			want = append(want, span(row.lo, row.hi))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("Unicode 15.0 rows:\n got %s\nwant %s", strings.Join(got, " "), strings.Join(want, " "))
		}
	}
}

func span(lo, hi rune) string {
	if lo == hi {
		return fmt.Sprintf("%04X", lo)
	}
	return fmt.Sprintf("%04X..%04X", lo, hi)
}

func TestLatinOffset(t *testing.T) {
	tab := ignorable.Table()
	for i, r := range tab.R16 {
		if (i < tab.LatinOffset) != (r.Hi <= unicode.MaxLatin1) {
			t.Fatalf("LatinOffset %d does not split the table at Latin-1: row %d is %04X..%04X", tab.LatinOffset, i, r.Lo, r.Hi)
		}
	}
	if !unicode.Is(tab, 0x00AD) || unicode.Is(tab, 'a') {
		t.Fatal("the Latin-1 part of the table is read wrong")
	}
}
