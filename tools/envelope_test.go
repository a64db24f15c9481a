package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
)

// composeMail is the real compose.Service behind the tools, sending from
// the call's account.
type composeMail struct{ svc *compose.Service }

func (m composeMail) Send(ctx context.Context, acct *account.Account, req compose.Request, opts SendOptions) (compose.Result, error) {
	return m.svc.Send(ctx, acct, req, compose.Options{Draft: opts.Draft, Progress: opts.Progress, ReadMail: opts.ReadMail, Confirm: opts.Confirm})
}

func (m composeMail) SendDraft(ctx context.Context, acct *account.Account, id string, confirm func(context.Context, compose.Summary) error) (compose.DraftSent, error) {
	return m.svc.SendDraft(ctx, acct, id, confirm)
}

// overEmulator points the harness's account at env, with a token of
// sender for scopes.
func (h *harness) overEmulator(env *emutest.Env, scopes ...string) {
	h.hc, h.google = env.Client(sender, scopes...), account.Options{Endpoints: env.Endpoints}
}

// sender is the user the end-to-end harness sends as.
const sender = "demo@example.com"

// endToEnd is a harness whose tools send through the real compose and an
// emulator, as sender.
func endToEnd(t *testing.T) (*harness, *emutest.Env) {
	t.Helper()
	env := emutest.Start(t)
	svc := compose.New(compose.Config{})
	h := newHarness(t, func(d *Deps) { d.Mail = composeMail{svc: svc} })
	h.overEmulator(env, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend)
	return h, env
}

// TestFileEnvelopeSendsEndToEnd: a chat client's file envelope goes out as
// the file it describes, whether it is the attachments entry itself or the
// "content" of an entry (a middleware filling an x-file field), and its
// bytes count toward the 1 MiB cap on model-written content: exactly
// 1 MiB goes, one byte more is refused with nothing sent.
func TestFileEnvelopeSendsEndToEnd(t *testing.T) {
	h, env := endToEnd(t)

	envelope := func(data []byte) string {
		b, err := json.Marshal(map[string]string{"file_name": "scan.pdf", "mime_type": "application/pdf", "base64": base64.StdEncoding.EncodeToString(data)})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	places := []struct {
		name  string
		entry func(string) any
	}{
		{"as the entry", func(e string) any { return e }},
		{"as content", func(e string) any { return map[string]any{"content": e} }},
	}
	for _, place := range places {
		for _, size := range []int{compose.MaxModelBytes, compose.MaxModelBytes + 1} {
			data := make([]byte, size)
			rand.Read(data)
			before := env.Emu.Stats().MessagesSent
			res := h.call("send_email", map[string]any{"to": "zoe@example.org", "subject": "scan", "body_text": "attached",
				"attachments": []any{place.entry(envelope(data))}})
			sent := env.Emu.Stats().MessagesSent - before

			if size > compose.MaxModelBytes {
				if !res.IsError || !strings.Contains(res.text(), "limited to 1 MiB") || sent != 0 {
					t.Errorf("%s, %d bytes: isError=%v, %d sent, %q; want the 1 MiB refusal and nothing sent", place.name, size, res.IsError, sent, res.text())
				}
				continue
			}
			if res.IsError || sent != 1 {
				t.Fatalf("%s, %d bytes: isError=%v, %d sent: %s", place.name, size, res.IsError, sent, res.text())
			}
			var out compose.Result
			if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
				t.Fatal(err)
			}
			ctype, body := attachmentPart(t, env.Message(sender, out.ID), "scan.pdf")
			if ctype != "application/pdf" || !bytes.Equal(body, data) {
				t.Errorf("%s: scan.pdf went as %q with %d bytes (equal: %v); want application/pdf with the envelope's %d bytes",
					place.name, ctype, len(body), bytes.Equal(body, data), len(data))
			}
		}
	}
}

// attachmentPart finds the part of raw named name and returns its media
// type and decoded bytes.
func attachmentPart(t *testing.T, raw []byte, name string) (string, []byte) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	ctype, body, ok := findPart(t, m.Header.Get("Content-Type"), m.Body, name)
	if !ok {
		t.Fatalf("the message has no part named %q", name)
	}
	return ctype, body
}

func findPart(t *testing.T, contentType string, body io.Reader, name string) (string, []byte, bool) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(mt, "multipart/") {
		return "", nil, false
	}
	r := multipart.NewReader(body, params["boundary"])
	for {
		p, err := r.NextRawPart()
		if err == io.EOF {
			return "", nil, false
		}
		if err != nil {
			t.Fatal(err)
		}
		ct := p.Header.Get("Content-Type")
		if p.FileName() == name {
			pt, _, _ := mime.ParseMediaType(ct)
			var src io.Reader = p
			if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "base64") {
				src = base64.NewDecoder(base64.StdEncoding, p)
			}
			b, err := io.ReadAll(src)
			if err != nil {
				t.Fatal(err)
			}
			return pt, b, true
		}
		if pt, b, ok := findPart(t, ct, p, name); ok {
			return pt, b, true
		}
	}
}

// TestComposeRulesReachTheModelOnce: the rules compose owns (a name for
// content, link against as and sheet, at most 100 references) are stated
// there once; through the tools a model gets compose's one sentence, and
// nothing is sent.
func TestComposeRulesReachTheModelOnce(t *testing.T) {
	h, env := endToEnd(t)
	doc := env.Put(sender, drivesvc.FileSpec{Name: "Plan", Kind: drivesvc.KindDoc, DocText: "x"})
	refs := make([]string, compose.MaxReferenceEntries+1)
	for i := range refs {
		refs[i] = fmt.Sprintf("<m%d@example.org>", i)
	}
	cases := []struct {
		name  string
		entry any
		want  []string
		more  map[string]any
	}{
		{"text without a name", map[string]any{"text": "a,b"}, []string{"Attachment 1 has content but no name", `Give it "name"`}, nil},
		{"an envelope as content, without any name", map[string]any{"content": `{"base64":"eA=="}`}, []string{"Attachment 1 has content but no name"}, nil},
		{"link with as", map[string]any{"file_id": doc.ID, "link": true, "as": "pdf"}, []string{`both "link": true and "as": "pdf"`}, nil},
		{"link with sheet", map[string]any{"file_id": doc.ID, "link": true, "sheet": "Q3"}, []string{`both "link": true and "sheet"`}, nil},
		{"101 references", doc.ID, []string{`"references" has 101 entries; give at most 100`}, map[string]any{"references": refs}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := env.Emu.Stats().MessagesSent
			args := map[string]any{"to": "zoe@example.org", "subject": "s", "body_text": "b", "attachments": []any{c.entry}}
			for k, v := range c.more {
				args[k] = v
			}
			h.mustRefuse("send_email", args, c.want...)
			if sent := env.Emu.Stats().MessagesSent - before; sent != 0 {
				t.Errorf("%d messages sent", sent)
			}
		})
	}
}
