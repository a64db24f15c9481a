package main

import (
	"bytes"
	"io"
	"testing"
)

func TestPayloadRepeatsItsBlock(t *testing.T) {
	size := int64(len(block)*2 + 10)
	got, err := io.ReadAll(newPayload(size))
	if err != nil || int64(len(got)) != size {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
	if !bytes.Equal(got[:len(block)], block) || !bytes.Equal(got[len(block):2*len(block)], block) || !bytes.Equal(got[2*len(block):], block[:10]) {
		t.Error("payload is not the block repeated")
	}
}
