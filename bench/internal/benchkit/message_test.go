package benchkit

import (
	"bytes"
	"io"
	"net/mail"
	"testing"
)

func TestSyntheticMessageIsExactAndValid(t *testing.T) {
	for _, size := range []int64{200, 35_870_000, 1 << 20} {
		b, err := io.ReadAll(NewSyntheticMessage(size, "bench@example.org"))
		if err != nil || int64(len(b)) != size {
			t.Fatalf("%d bytes wanted, read %d (%v)", size, len(b), err)
		}
		if _, err := mail.ReadMessage(bytes.NewReader(b)); err != nil {
			t.Errorf("a %d-byte message does not parse: %v", size, err)
		}
	}
}
