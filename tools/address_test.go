package tools

import (
	"bytes"
	"encoding/json"
	"net/mail"
	"reflect"
	"testing"

	"github.com/drivemail/drivemail/compose"
)

func TestSplitAddressesKeepsQuotedSeparators(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`ana@example.com; bo@example.com`, []string{"ana@example.com", "bo@example.com"}},
		{`"Smith; John" <john@example.com>`, []string{`"Smith; John" <john@example.com>`}},
		{`"Smith; John" <john@example.com>; ana@example.com`, []string{`"Smith; John" <john@example.com>`, "ana@example.com"}},
		{`"Lima, Bo" <bo@example.com>, "a \"q;\" b" <q@example.com>`, []string{`"Lima, Bo" <bo@example.com>`, `"a \"q;\" b" <q@example.com>`}},
		{`ana@example.com (Ana; Sales), bo@example.com`, []string{"ana@example.com (Ana; Sales)", "bo@example.com"}},
		{`ana@example.com,`, []string{"ana@example.com"}},
		{`not an address; also not`, []string{"not an address; also not"}},
	}
	for _, c := range cases {
		if got := splitAddresses(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitAddresses(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestQuotedDisplayNameSurvivesSending: a semicolon inside a quoted
// display name reaches the recipient's To header as written, read back
// from the sent message.
func TestQuotedDisplayNameSurvivesSending(t *testing.T) {
	h, env := endToEnd(t)
	for _, to := range []any{
		`"Smith; John" <john@example.com>; ana@example.com`,
		[]string{`"Smith; John" <john@example.com>`, "ana@example.com"},
	} {
		res := h.call("send_email", map[string]any{"to": to, "subject": "names", "body_text": "hi"})
		if res.IsError {
			t.Fatalf("to %v: %s", to, res.text())
		}
		var out compose.Result
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
			t.Fatal(err)
		}
		msg, err := mail.ReadMessage(bytes.NewReader(env.Message(sender, out.ID)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := msg.Header.AddressList("To")
		if err != nil {
			t.Fatalf("To %q: %v", msg.Header.Get("To"), err)
		}
		if len(got) != 2 || got[0].Name != "Smith; John" || got[0].Address != "john@example.com" || got[1].Address != "ana@example.com" {
			t.Errorf("to %v: the sent To header is %q", to, msg.Header.Get("To"))
		}
	}
}
