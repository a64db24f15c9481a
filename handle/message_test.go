package handle

import (
	"errors"
	"strings"
	"testing"
)

func TestParseMessage(t *testing.T) {
	max := strings.Repeat("a", 64)
	tests := []struct {
		in      string
		want    string
		problem Problem
	}{
		{"18f3a2b4c5d6e7f8", "18f3a2b4c5d6e7f8", 0},
		{"  18f3a2b4c5d6e7f8\n", "18f3a2b4c5d6e7f8", 0},
		{max, max, 0},
		{max + "a", "", NotAMessageID},
		{"", "", Empty},
		{" \t", "", Empty},
		{"<CAF3x@mail.gmail.com>", "", HeaderID},
		{"CAF3x@mail.gmail.com", "", HeaderID},
		{"https://mail.google.com/mail/u/0/#inbox/FMfcgzQXJWmv", "", MailLink},
		{"invoice.pdf", "", NotAMessageID},
		{"18f3 a2b4", "", NotAMessageID},
		{"../18f3", "", NotAMessageID},
	}
	for _, tt := range tests {
		got, err := ParseMessage(tt.in)
		var se *SyntaxError
		switch {
		case tt.problem == 0 && (err != nil || got.ID != tt.want):
			t.Errorf("ParseMessage(%q) = %+v, %v; want %q", tt.in, got, err, tt.want)
		case tt.problem != 0 && (!errors.As(err, &se) || se.Problem != tt.problem):
			t.Errorf("ParseMessage(%q) = %+v, %v; want problem %d", tt.in, got, err, tt.problem)
		}
	}
}
