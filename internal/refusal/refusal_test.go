package refusal

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestAsAndKindOfFindARefusalBelowWrapping(t *testing.T) {
	r := Wrap(io.ErrUnexpectedEOF, "drive_unavailable", "Google Drive stopped sending %q part-way.", "a.pdf")
	err := fmt.Errorf("resolve: %w", r)
	got, ok := As(err)
	if !ok || got != r || KindOf(err) != "drive_unavailable" {
		t.Fatalf("As = %v, %v; KindOf = %q", got, ok, KindOf(err))
	}
	if err.Error() != `resolve: Google Drive stopped sending "a.pdf" part-way.` || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("text %q, or the cause is lost", err)
	}
	if _, ok := As(io.EOF); ok || KindOf(io.EOF) != "" {
		t.Error("an internal error reads as a refusal")
	}
}

func TestDeliveryOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Delivery
	}{
		{"a refusal", New("too_many_files", "Too many."), NotSent},
		{"a refusal after the whole message went", &Refusal{Kind: "maybe_sent", Text: "Check Sent.", Delivery: MaybeSent}, MaybeSent},
		{"an internal error that provably sent nothing", fmt.Errorf("send: %w", &Unsent{Err: io.EOF}), NotSent},
		{"any other internal error", io.EOF, MaybeSent},
	}
	for _, tt := range tests {
		if got := DeliveryOf(tt.err); got != tt.want {
			t.Errorf("%s: DeliveryOf = %v, want %v", tt.name, got, tt.want)
		}
	}
}
