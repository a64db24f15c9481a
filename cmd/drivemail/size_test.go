package main

import "testing"

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1024", 1024, true},
		{"256MiB", 256 << 20, true},
		{"1GiB", 1 << 30, true},
		{"512kib", 512 << 10, true},
		{" 2 MiB ", 2 << 20, true},
		{"0", 0, true},                            // serve refuses it, saying why
		{"8589934591GiB", 8589934591 << 30, true}, // the largest that fits
		{"8589934592GiB", 0, false},               // one past it
		{"", 0, false},
		{"MiB", 0, false},
		{"-1", 0, false},
		{"1.5GiB", 0, false},
		{"128MB", 0, false},
		{"1 GB", 0, false},
	} {
		got, err := parseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0"}, {1000, "1000"}, {1536 << 10, "1536KiB"}, {137 << 20, "137MiB"}, {2 << 30, "2GiB"}} {
		if got := formatSize(c.n); got != c.want {
			t.Errorf("formatSize(%d) = %q, want %q", c.n, got, c.want)
		}
		if back, err := parseSize(c.want); err != nil || back != c.n {
			t.Errorf("parseSize(formatSize(%d)) = %d, %v", c.n, back, err)
		}
	}
}
