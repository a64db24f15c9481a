// Package ignorable is Unicode's Default_Ignorable_Code_Point property:
// the characters a renderer shows as nothing when it has no particular
// support for them. Zero-width spaces and joiners, bidi embeddings,
// overrides and isolates, variation selectors (two of them carry any
// byte), tag characters and Hangul fillers are all in it, so text that
// must be read as written treats every one of them as not plain.
//
// Go's unicode package exports only the contributory property
// Other_Default_Ignorable_Code_Point, so the property is derived here, from
// the unicode package's own tables (and so for the Unicode version of the
// Go release), with the definition DerivedCoreProperties.txt gives:
//
//	Other_Default_Ignorable_Code_Point
//	+ Cf (format characters)
//	+ Variation_Selector
//	- White_Space
//	- FFF9..FFFB (interlinear annotation format characters)
//	- 13430..1343F (Egyptian hieroglyph format characters)
//	- Prepended_Concatenation_Mark (format characters that should be visible)
package ignorable

import (
	"sync"
	"unicode"
)

// Is reports whether r is a Default_Ignorable_Code_Point.
func Is(r rune) bool { return unicode.Is(table(), r) }

// Table is the property as a range table, built on first use.
func Table() *unicode.RangeTable { return table() }

var table = sync.OnceValue(derive)

// derive walks the code space once and collects the code points the
// definition selects into ranges.
func derive() *unicode.RangeTable {
	rt := &unicode.RangeTable{}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !byDefinition(r) {
			continue
		}
		if r <= 0xFFFF {
			n := len(rt.R16)
			if n > 0 && rune(rt.R16[n-1].Hi) == r-1 {
				rt.R16[n-1].Hi = uint16(r)
			} else {
				rt.R16 = append(rt.R16, unicode.Range16{Lo: uint16(r), Hi: uint16(r), Stride: 1})
			}
			continue
		}
		n := len(rt.R32)
		if n > 0 && rune(rt.R32[n-1].Hi) == r-1 {
			rt.R32[n-1].Hi = uint32(r)
		} else {
			rt.R32 = append(rt.R32, unicode.Range32{Lo: uint32(r), Hi: uint32(r), Stride: 1})
		}
	}
	for _, r16 := range rt.R16 {
		if r16.Hi <= unicode.MaxLatin1 {
			rt.LatinOffset++
		}
	}
	return rt
}

// byDefinition is the property's definition, one code point at a time.
func byDefinition(r rune) bool {
	switch {
	case r >= 0xFFF9 && r <= 0xFFFB, r >= 0x13430 && r <= 0x1343F:
		return false
	case unicode.Is(unicode.White_Space, r), unicode.Is(unicode.Prepended_Concatenation_Mark, r):
		return false
	}
	return unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}
