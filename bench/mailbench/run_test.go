package main

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestWriteBase64Lines: the bench's message carries its attachment as
// base64 in lines of at most 76 characters that decode to the bytes.
func TestWriteBase64Lines(t *testing.T) {
	for _, n := range []int{0, 1, 57, 57*1024 - 1, 57 * 1024, 200_003} {
		data := make([]byte, n)
		rand.NewChaCha8([32]byte{1}).Read(data)
		var out bytes.Buffer
		if err := writeBase64Lines(&out, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\r\n"), "\r\n") {
			if len(l) > 76 {
				t.Fatalf("%d bytes: a line of %d characters", n, len(l))
			}
		}
		got, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(out.String(), "\r\n", ""))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: decoded %d, %v", n, len(got), err)
		}
	}
}
