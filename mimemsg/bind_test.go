package mimemsg

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
)

// TestBindStreamsOneValidationMoreThanOnce: a message prepared once and
// bound for two passes carries the same Date and Message-ID in both
// (generated once, by PrepareHeader), takes each part from the pass's own
// Open functions in Written.Parts order, and never opens the parts it was
// prepared with.
func TestBindStreamsOneValidationMoreThanOnce(t *testing.T) {
	orig := []*source{{data: "orig-inline"}, {data: "orig-a"}, {data: "orig-b"}}
	m := base() // no Date, no MessageID: both made by PrepareHeader
	m.HTML = `<img src="cid:logo@x">`
	m.Inline = []Part{{Name: "logo.png", ContentID: "logo@x", Size: -1, Open: orig[0].open}}
	m.Attachments = []Part{{Name: "a.txt", Size: -1, Open: orig[1].open}, {Name: "b.txt", Size: -1, Open: orig[2].open}}
	p, err := Prepare(m)
	if err != nil {
		t.Fatal(err)
	}

	var dates []string
	for pass := range 2 {
		srcs := []*source{{data: fmt.Sprint("inline ", pass)}, {data: fmt.Sprint("first ", pass)}, {data: fmt.Sprint("second ", pass)}}
		b, err := p.Bind([]func(context.Context) (io.ReadCloser, error){srcs[0].open, srcs[1].open, srcs[2].open})
		if err != nil {
			t.Fatalf("pass %d: Bind: %v", pass, err)
		}
		var out bytes.Buffer
		if _, err := b.Stream(context.Background(), &out); err != nil {
			t.Fatalf("pass %d: Stream: %v", pass, err)
		}
		if _, err := b.Stream(context.Background(), io.Discard); err == nil {
			t.Errorf("pass %d: a bound message streamed twice", pass)
		}
		msg, root := parseGo(t, out.Bytes())
		if got := msg.Header.Get("Message-Id"); got != p.MessageID() {
			t.Errorf("pass %d: Message-ID %q, prepared %q", pass, got, p.MessageID())
		}
		dates = append(dates, msg.Header.Get("Date"))
		leaves := root.leaves()
		if len(leaves) != 4 {
			t.Fatalf("pass %d: %d leaves, want html and three files", pass, len(leaves))
		}
		for i, s := range srcs {
			if got := string(leaves[i+1].body); got != s.data || s.opens != 1 || s.closes != 1 {
				t.Errorf("pass %d, part %d: %q (opened %d, closed %d), want %q from the bound Open", pass, i, got, s.opens, s.closes, s.data)
			}
		}
	}
	if dates[0] == "" || dates[0] != dates[1] {
		t.Errorf("Date %q, then %q: want the one PrepareHeader fixed", dates[0], dates[1])
	}
	for i, s := range orig {
		if s.opens != 0 {
			t.Errorf("prepared part %d opened %d times; Bind's should replace it", i, s.opens)
		}
	}
}

func TestBindRefusesMismatchedOpens(t *testing.T) {
	m := base()
	m.Attachments = []Part{filePart("a.txt", "", "a"), filePart("b.txt", "", "b")}
	p, err := Prepare(m)
	if err != nil {
		t.Fatal(err)
	}
	open := (&source{data: "x"}).open
	for _, opens := range [][]func(context.Context) (io.ReadCloser, error){nil, {open}, {open, open, open}, {open, nil}} {
		if _, err := p.Bind(opens); err == nil {
			t.Errorf("Bind with %d Open functions (one nil: %v) succeeded", len(opens), len(opens) == 2)
		}
	}
}

// TestHeaderPrepareReadsOnlyTheBody: the two halves of Prepare check
// each field once: Header.Prepare keeps the header PrepareHeader checked
// and ignores the header fields of the message it is given.
func TestHeaderPrepareReadsOnlyTheBody(t *testing.T) {
	m := base()
	m.MessageID = "kept@example.com"
	h, err := PrepareHeader(m)
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.Prepare(Message{Text: "body", To: []string{"not an address"}})
	if err != nil {
		t.Fatalf("Header.Prepare read the header fields: %v", err)
	}
	var out bytes.Buffer
	if _, err := p.Stream(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	msg, _ := parseGo(t, out.Bytes())
	if msg.Header.Get("To") != "<rcpt@example.org>" || msg.Header.Get("Message-Id") != "<kept@example.com>" {
		t.Errorf("To %q, Message-ID %q: want PrepareHeader's", msg.Header.Get("To"), msg.Header.Get("Message-Id"))
	}
	if _, err := h.Prepare(Message{Attachments: []Part{{Name: "a/b", Open: (&source{}).open}}}); err == nil {
		t.Error("Header.Prepare accepted a part name with a path separator")
	}
}
