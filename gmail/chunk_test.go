package gmail

import "testing"

// TestChunkFor: the buffer an upload holds for the size it expects, at
// each edge: unknown; just under and at the one-request limit and the
// chunk size; a message that fills whole chunks; Gmail's largest.
func TestChunkFor(t *testing.T) {
	const kib, mib = 1 << 10, 1 << 20
	tests := []struct {
		name      string
		chunkSize int
		size      int64
		want      int
	}{
		{"unknown size", 5 * mib, 0, 5 * mib},
		{"a small message: just over its size", 5 * mib, 70_000, 256 * kib},
		{"a message that fills 256 KiB exactly still sees its end", 5 * mib, 256 * kib, 512 * kib},
		{"one byte under the one-request limit", 5 * mib, OneRequestMax - 1, 5 * mib},
		{"at the one-request limit: two chunks", 5 * mib, OneRequestMax, 2560 * kib},
		{"7 MB: two even chunks", 5 * mib, 7_175_102, 3584 * kib},
		{"one byte under two whole chunks", 5 * mib, 10*mib - 1, 5 * mib},
		{"two whole chunks", 5 * mib, 10 * mib, 5 * mib},
		{"one byte past two whole chunks: three", 5 * mib, 10*mib + 1, 3584 * kib},
		{"Gmail's largest message: seven", 5 * mib, MaxMessageBytes, 5120 * kib},
		{"a small chunk size bounds the one request", 256 * kib, 256*kib - 1, 256 * kib},
		{"at a small chunk size: two", 256 * kib, 256 * kib, 256 * kib},
		{"a larger chunk size keeps the one-request limit", 8 * mib, OneRequestMax, 2560 * kib},
		{"35.9 MB in 8 MiB chunks: five", 8 * mib, 35_872_970, 7 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{chunkSize: tt.chunkSize}
			got := c.chunkFor(tt.size)
			if got != tt.want {
				t.Errorf("chunkFor(%d) with chunks of %d = %d, want %d", tt.size, tt.chunkSize, got, tt.want)
			}
			if got%(256*kib) != 0 || got > tt.chunkSize {
				t.Errorf("chunkFor(%d) = %d: not a multiple of 256 KiB within %d", tt.size, got, tt.chunkSize)
			}
			if tt.size > 0 && int64(got)*((tt.size+int64(got)-1)/int64(got)) < tt.size {
				t.Errorf("chunks of %d do not cover %d bytes", got, tt.size)
			}
		})
	}
}
