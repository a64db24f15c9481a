package stream

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

var errOver = errors.New("over the budget")

// TestLimit reads streams at, under and past their limit.
func TestLimit(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		limit   int64
		extend  int64 // Extend(extend) before reading
		want    string
		wantErr bool
	}{
		{"under the limit", "abc", 4, 0, "abc", false},
		{"exactly at the limit", "abcd", 4, 0, "abcd", false},
		{"one past the limit", "abcde", 4, 0, "abcd", true},
		{"far past the limit", strings.Repeat("x", 1000), 4, 0, "xxxx", true},
		{"a zero limit, empty", "", 0, 0, "", false},
		{"a zero limit, one byte", "a", 0, 0, "", true},
		{"extended", "abcdef", 4, 2, "abcdef", false},
		{"extended, still past", "abcdefg", 4, 2, "abcdef", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []struct {
				name string
				r    io.Reader
			}{
				{"whole reads", strings.NewReader(tt.in)},
				{"one byte a read", iotest.OneByteReader(strings.NewReader(tt.in))},
				{"EOF with the data", iotest.DataErrReader(strings.NewReader(tt.in))},
			} {
				l := Limit(r.r, tt.limit, errOver)
				l.Extend(tt.extend)
				got, err := io.ReadAll(l)
				if left := tt.limit + tt.extend - int64(len(got)); l.Left() != left {
					t.Errorf("%s: Left = %d after %d bytes, want %d", r.name, l.Left(), len(got), left)
				}
				var le *LimitError
				switch {
				case string(got) != tt.want:
					t.Errorf("%s: read %q, want %q", r.name, got, tt.want)
				case tt.wantErr && (!errors.Is(err, errOver) || !errors.As(err, &le) || le.Limit != tt.limit+tt.extend):
					t.Errorf("%s: err = %v, want a *LimitError at %d wrapping errOver", r.name, err, tt.limit+tt.extend)
				case !tt.wantErr && err != nil:
					t.Errorf("%s: err = %v, want the stream's end", r.name, err)
				}
				if tt.wantErr {
					if _, again := l.Read(make([]byte, 1)); again != err {
						t.Errorf("%s: the next read = %v, want the same failure", r.name, again)
					}
				}
			}
		})
	}
}

// TestLimitErrorText is the caller's error's text, or the limit's.
func TestLimitErrorText(t *testing.T) {
	if got := (&LimitError{Limit: 5, Err: errOver}).Error(); got != errOver.Error() {
		t.Errorf("with an error: %q", got)
	}
	if got := (&LimitError{Limit: 5}).Error(); got != "stream: more than 5 bytes" {
		t.Errorf("without one: %q", got)
	}
}
