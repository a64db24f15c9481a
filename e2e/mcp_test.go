// Package e2e drives the real drivemail server end to end: the whole
// program (server.Run with --demo's in-process Google emulator) and a
// client we did not write, the official MCP go-sdk.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-message"
	_ "github.com/emersion/go-message/charset"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/internal/logtest"
	"github.com/drivemail/drivemail/server"
)

// running is one drivemail serve --demo in this process.
type running struct {
	base, token, emulator string
	files                 map[string][]byte // seeded name → bytes
}

// pdfBytes is a small but real PDF.
var pdfBytes = []byte("%PDF-1.4\n1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj\n2 0 obj <</Type /Pages /Kids [] /Count 0>> endobj\n" +
	"xref\n0 3\n0000000000 65535 f \n0000000009 00000 n \n0000000058 00000 n \ntrailer <</Size 3 /Root 1 0 R>>\nstartxref\n110\n%%EOF\n")

// startDemo seeds a demo Drive, runs the server until the test ends, and
// returns where it listens and the demo token it printed.
func startDemo(t *testing.T) running { return startDemoWith(t, nil) }

// startDemoWith is startDemo with the settings change makes.
func startDemoWith(t *testing.T, change func(*server.Config)) running {
	t.Helper()
	dir := t.TempDir()
	user := filepath.Join(dir, "seed", "demo@example.com")
	files := map[string][]byte{
		"Q3 report.pdf": pdfBytes,
		"Plan.gdoc.md":  []byte("# Plan\n\n- ship drivemail\n"),
		// The recipients are of example.com, so they can open its link.
		"Plan.gdoc.md.meta.json": []byte(`{"permissions": [{"type": "domain", "role": "reader", "domain": "example.com"}]}`),
		"logo.png":               {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0},
		// Big enough that compose reports progress while it streams.
		"scan.pdf": bytes.Repeat([]byte("%PDF-1.4 scan "), 50_000),
	}
	if err := os.MkdirAll(filepath.Join(user, "Budget.gsheet"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(user, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, csv := range map[string]string{"1 Q3.csv": "item,eur\nads,100\n", "2 Q4 forecast.csv": "item,eur\nads,120\n"} {
		if err := os.WriteFile(filepath.Join(user, "Budget.gsheet", name), []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	cfg := server.Config{
		Addr: "127.0.0.1:0", Store: "sqlite:" + filepath.Join(dir, "dm.db"),
		Demo: true, DemoSeed: filepath.Join(dir, "seed"), Drafts: true,
		MaxUploadBytes: 1 << 20, MaxConcurrentSends: 4, ShutdownGrace: 5 * time.Second,
		LogLevel: "warn", Version: "e2e",
	}
	if change != nil {
		change(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var logs logtest.Buffer
	done := make(chan error, 1)
	go func() {
		err := server.Run(ctx, cfg, pw, &logs)
		pw.CloseWithError(fmt.Errorf("server stopped: %v", err))
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server.Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("server.Run did not return after its context ended")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})

	r := running{files: files}
	lines := bufio.NewScanner(pr)
	for r.base == "" && lines.Scan() {
		line := lines.Text()
		switch {
		case strings.HasPrefix(line, "DEMO_TOKEN="):
			r.token = strings.TrimPrefix(line, "DEMO_TOKEN=")
		case strings.HasPrefix(line, "emulator on "):
			r.emulator = strings.Fields(line)[2]
		case strings.HasPrefix(line, "listening on "):
			r.base = strings.TrimPrefix(line, "listening on ")
		}
	}
	if r.base == "" || r.token == "" || r.emulator == "" {
		t.Fatalf("serve --demo printed no listening/DEMO_TOKEN/emulator line: %v\n%s", lines.Err(), logs.String())
	}
	go io.Copy(io.Discard, pr)
	return r
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// session connects the go-sdk client with the demo token.
func (r running) session(t *testing.T, version string, progress func(*sdk.ProgressNotificationParams)) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, req *sdk.ProgressNotificationClientRequest) { progress(req.Params) }
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "drivemail-e2e", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: r.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{r.token}}},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (%s): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call invokes a tool and decodes its structuredContent into out; it
// fails the test on a refusal.
func call(t *testing.T, cs *sdk.ClientSession, params *sdk.CallToolParams, out any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	if res.IsError {
		t.Fatalf("%s refused: %s", params.Name, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s structuredContent %s: %v", params.Name, b, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type driveFile struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	MimeType      string   `json:"mime_type"`
	Size          *int64   `json:"size"`
	Native        bool     `json:"native"`
	ExportFormats []string `json:"export_formats"`
	Sheets        []string `json:"sheets"`
}

type sendResult struct {
	ID        string `json:"id"`
	ThreadID  string `json:"thread_id"`
	MessageID string `json:"message_id"`
	DraftID   string `json:"draft_id"`
	Attached  []struct {
		FileID     string `json:"file_id"`
		Name       string `json:"name"`
		Bytes      int64  `json:"bytes"`
		ExportedAs string `json:"exported_as"`
		Sheet      string `json:"sheet"`
	} `json:"attached"`
	Linked []struct {
		FileID string `json:"file_id"`
		Name   string `json:"name"`
		URL    string `json:"url"`
		Access string `json:"access"`
	} `json:"linked"`
}

func TestEndToEnd(t *testing.T) {
	srv := startDemo(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { flow(t, srv, version) })
	}
}

// flow is one model's conversation: list tools, search, look at a file,
// send with attachments, draft, upload a local file and send it.
func flow(t *testing.T, srv running, version string) {
	var mu sync.Mutex
	var progress []float64
	cs := srv.session(t, version, func(p *sdk.ProgressNotificationParams) {
		mu.Lock()
		progress = append(progress, p.Progress)
		mu.Unlock()
	})
	ctx := context.Background()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Six tools, search_mail and send_draft: --demo turns --read-mail and
	// --drafts on.
	if len(list.Tools) != 8 {
		t.Fatalf("tools/list: %d tools", len(list.Tools))
	}
	for _, tool := range list.Tools {
		if tool.OutputSchema == nil || tool.Annotations == nil || tool.Annotations.OpenWorldHint == nil || tool.Annotations.DestructiveHint == nil {
			t.Errorf("%s: missing output schema or annotations", tool.Name)
		}
	}

	var found struct {
		Files []driveFile `json:"files"`
	}
	call(t, cs, &sdk.CallToolParams{Name: "drive_search", Arguments: map[string]any{"query": ""}}, &found)
	byName := map[string]driveFile{}
	for _, f := range found.Files {
		byName[f.Name] = f
	}
	pdf, doc, sheet, scan := byName["Q3 report.pdf"], byName["Plan"], byName["Budget"], byName["scan.pdf"]
	if pdf.ID == "" || doc.ID == "" || sheet.ID == "" || scan.ID == "" {
		t.Fatalf("drive_search did not list the seeded files: %+v", found.Files)
	}
	if pdf.Size == nil || *pdf.Size != int64(len(pdfBytes)) || pdf.Native {
		t.Errorf("pdf = %+v", pdf)
	}
	if !doc.Native || doc.Size != nil || !contains(doc.ExportFormats, "pdf") {
		t.Errorf("doc = %+v", doc)
	}

	var onlyPDFs struct {
		Files []driveFile `json:"files"`
	}
	call(t, cs, &sdk.CallToolParams{Name: "drive_search", Arguments: map[string]any{"query": "", "mime_type": "pdf"}}, &onlyPDFs)
	if len(onlyPDFs.Files) != 2 {
		t.Errorf("mime_type pdf found %+v", onlyPDFs.Files)
	}

	var got driveFile
	call(t, cs, &sdk.CallToolParams{Name: "drive_get_file", Arguments: map[string]any{"file_id": sheet.ID}}, &got)
	if strings.Join(got.Sheets, "|") != "Q3|Q4 forecast" {
		t.Errorf("sheet tabs = %v", got.Sheets)
	}

	// send_email: a PDF by id (sloppy: one attachment as a string would do;
	// here a list), a Doc as a link, a Sheet tab exported as CSV.
	subject := "Q3 numbers " + version
	params := &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{
		"to": "ana@example.com", "cc": []string{"bo@example.com"}, "subject": subject,
		"body_text":   "Here are the numbers.",
		"attachments": []any{pdf.ID, doc.ID, map[string]any{"file_id": sheet.ID, "as": ".CSV", "sheet": "Q4 forecast"}, scan.ID},
	}}
	params.SetProgressToken("send-" + version)
	var sent sendResult
	call(t, cs, params, &sent)
	if sent.ID == "" || len(sent.Attached) != 3 || len(sent.Linked) != 1 || sent.Linked[0].FileID != doc.ID || sent.Linked[0].Access != "open" {
		t.Fatalf("send_email result = %+v", sent)
	}
	if sent.Attached[1].ExportedAs != "csv" || sent.Attached[1].Sheet != "Q4 forecast" {
		t.Errorf("csv attachment = %+v", sent.Attached[1])
	}
	msg := srv.readMail(t, sent.ID)
	if msg.subject != subject || !strings.Contains(msg.to, "ana@example.com") || !strings.Contains(msg.cc, "bo@example.com") {
		t.Errorf("mail headers = %+v", msg)
	}
	if b := msg.attachments["Q3 report.pdf"]; sha(b) != sha(pdfBytes) {
		t.Errorf("Q3 report.pdf in the mail differs from the Drive file (%d bytes, want %d)", len(b), len(pdfBytes))
	}
	// Google's CSV export ends rows with CRLF.
	if b := msg.attachments["Budget.csv"]; strings.ReplaceAll(string(b), "\r\n", "\n") != "item,eur\nads,120\n" {
		t.Errorf("Budget.csv in the mail = %q, want the Q4 forecast tab", b)
	}
	if !strings.Contains(msg.text, doc.ID) {
		t.Errorf("the Doc's link is not in the text body: %q", msg.text)
	}
	if b := msg.attachments["scan.pdf"]; !bytes.Equal(b, srv.files["scan.pdf"]) {
		t.Errorf("scan.pdf in the mail differs from the Drive file (%d bytes)", len(b))
	}
	// Notifications sent while the message streams; the last one may race
	// the response, so only those before it are counted on.
	mu.Lock()
	gotProgress := append([]float64(nil), progress...)
	mu.Unlock()
	if len(gotProgress) < 2 {
		t.Errorf("%d progress notifications for a %d-byte send with a progress token, want several", len(gotProgress), len(srv.files["scan.pdf"]))
	}

	// A reply in the same conversation, by the thread_id and message_id
	// the send returned and its subject (Gmail's three threading criteria).
	var reply sendResult
	call(t, cs, &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{
		"to": "ana@example.com", "subject": subject, "body_text": "One more thing.",
		"thread_id": sent.ThreadID, "in_reply_to": sent.MessageID}}, &reply)
	if sent.MessageID == "" || reply.ThreadID != sent.ThreadID || reply.MessageID == sent.MessageID {
		t.Errorf("reply = %+v to %+v, want the same thread and its own message_id", reply, sent)
	}
	if m := srv.readMail(t, reply.ID); m.subject != "Re: "+subject || m.inReplyTo != sent.MessageID {
		t.Errorf("reply headers: subject %q, In-Reply-To %q; want Re: %s and %s", m.subject, m.inReplyTo, subject, sent.MessageID)
	}

	// create_draft: the demo grant includes gmail.compose (serve --drafts).
	var draft sendResult
	call(t, cs, &sdk.CallToolParams{Name: "create_draft", Arguments: map[string]any{
		"to": "ana@example.com", "subject": "Draft " + version, "body_html": "<p>Draft</p>", "attachments": pdf.ID}}, &draft)
	if draft.DraftID == "" || len(draft.Attached) != 1 {
		t.Errorf("create_draft result = %+v", draft)
	}

	// request_upload, then the upload a shell would make, then a send by handle.
	local := []byte("minutes of the meeting, " + version + "\n")
	var ticket struct {
		UploadURL string `json:"upload_url"`
		Method    string `json:"method"`
		Handle    string `json:"handle"`
		Curl      string `json:"curl"`
	}
	tres := call(t, cs, &sdk.CallToolParams{Name: "request_upload", Arguments: map[string]any{"name": "minutes.txt", "size": len(local), "sha256": sha(local)}}, &ticket)
	if ticket.UploadURL == "" || !strings.Contains(text(tres), "curl") {
		t.Fatalf("request_upload = %+v / %s", ticket, text(tres))
	}
	req, _ := http.NewRequest(ticket.Method, ticket.UploadURL, bytes.NewReader(local))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var up struct {
		FileID string `json:"file_id"`
		Handle string `json:"handle"`
	}
	err = json.NewDecoder(resp.Body).Decode(&up)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 201 || up.Handle == "" {
		t.Fatalf("upload: %d %+v %v", resp.StatusCode, up, err)
	}
	var withUpload sendResult
	call(t, cs, &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{
		"to": "ana@example.com", "subject": "Minutes " + version, "body_text": "Attached.", "attachments": up.Handle}}, &withUpload)
	if m := srv.readMail(t, withUpload.ID); !bytes.Equal(m.attachments["minutes.txt"], local) {
		t.Errorf("uploaded file in the mail = %q, want %q", m.attachments["minutes.txt"], local)
	}

	// A refusal is a result the model can read and act on.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{
		"to": "ana@example.com", "subject": "x", "body_text": "x", "attachments": []any{map[string]any{"file_id": pdf.ID, "format": "pdf"}}}})
	if err != nil || !res.IsError || !strings.Contains(text(res), `"format"`) {
		t.Errorf("bad attachment field: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "send_email", Arguments: map[string]any{
		"to": "ana@example.com", "subject": "x", "body_text": "x", "attachments": "1NoSuchFileNoSuchFileNoSuchFile00"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "drive_search") {
		t.Errorf("unknown file id: %v %s", err, text(res))
	}
}

// mail is a message read back from the emulated Gmail.
type mail struct {
	subject, to, cc, text, inReplyTo string
	attachments                      map[string][]byte // file name → decoded bytes
}

// readMail fetches message id as Gmail stored it (format=raw) and parses it.
func (r running) readMail(t *testing.T, id string) mail {
	t.Helper()
	m, err := r.reader(t).Users.Messages.Get("me", id).Format("raw").Do()
	if err != nil {
		t.Fatalf("gmail get %s: %v", id, err)
	}
	raw, err := decodeRaw(m.Raw)
	if err != nil {
		t.Fatal(err)
	}
	ent, err := message.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse the sent message: %v", err)
	}
	out := mail{attachments: map[string][]byte{}}
	out.subject, _ = ent.Header.Text("Subject")
	out.to = ent.Header.Get("To")
	out.cc = ent.Header.Get("Cc")
	out.inReplyTo = ent.Header.Get("In-Reply-To")
	err = ent.Walk(func(_ []int, e *message.Entity, err error) error {
		if err != nil {
			return err
		}
		disp, params, _ := e.Header.ContentDisposition()
		mt, _, _ := e.Header.ContentType()
		switch {
		case disp == "attachment":
			b, err := io.ReadAll(e.Body)
			if err != nil {
				return err
			}
			out.attachments[params["filename"]] = b
		case mt == "text/plain":
			b, err := io.ReadAll(e.Body)
			if err != nil {
				return err
			}
			out.text += string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk the sent message: %v", err)
	}
	return out
}

func decodeRaw(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	return base64.RawURLEncoding.DecodeString(s)
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
