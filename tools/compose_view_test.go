package tools

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	drivev3 "google.golang.org/api/drive/v3"
	"google.golang.org/api/option"

	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/prepared"
	"github.com/drivemail/drivemail/views"
)

var errSpent = errors.New("used")

// memOnce is the store's single-use keys, in memory.
type memOnce struct {
	mu   sync.Mutex
	used map[string]bool
}

func (m *memOnce) UseOnce(_ context.Context, key string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.used == nil {
		m.used = map[string]bool{}
	}
	if m.used[key] {
		return errSpent
	}
	m.used[key] = true
	return nil
}

// viewHarness is the end-to-end harness (the real compose over the
// emulator) for a client that renders views, with a prepared-message
// store whose clock is *now; it puts two files in the sender's Drive.
type viewHarness struct {
	*harness
	env       *emutest.Env
	now       *time.Time
	pdf, note drivesvc.File
}

func newViewHarness(t *testing.T) *viewHarness {
	t.Helper()
	now := time.Now()
	store, err := prepared.New([][]byte{[]byte("a secret of at least thirty-two bytes")}, (&memOnce{}).UseOnce, errSpent,
		prepared.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	h, env := endToEnd(t)
	h.deps.Prepared = store
	h.rebuild()
	h.ctx = views.WithRenders(context.Background(), true)
	v := &viewHarness{harness: h, env: env, now: &now}
	v.pdf = env.Put(sender, drivesvc.FileSpec{Name: "Q3 report.pdf", Content: []byte("%PDF-1.4 the report\n%%EOF\n")})
	v.note = env.Put(sender, drivesvc.FileSpec{Name: "<img src=x onerror=alert(1)>.txt", Content: []byte("notes")})
	return v
}

// prepare calls send_email for the view and returns its result and the
// compose view's data.
func (v *viewHarness) prepare(args map[string]any) (callResult, ComposeData) {
	v.t.Helper()
	raw := v.rpc("tools/call", map[string]any{"name": "send_email", "arguments": args})
	var res struct {
		callResult
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		v.t.Fatal(err)
	}
	if res.IsError {
		v.t.Fatalf("send_email refused: %s", res.text())
	}
	v.checkOutput("send_email", res.StructuredContent)
	var data ComposeData
	if err := json.Unmarshal(res.Meta[views.ComposeMeta], &data); err != nil || data.Prepared == "" {
		v.t.Fatalf("no compose data in _meta: %v %s", err, raw)
	}
	return res.callResult, data
}

func (v *viewHarness) sent() int64 { return v.env.Emu.Stats().MessagesSent }

func (v *viewHarness) message(args map[string]any) map[string]any {
	m := map[string]any{"to": "ana@example.com", "subject": "Q3", "body_text": "Hi Ana,\nthe report.",
		"attachments": []any{v.pdf.ID, v.note.ID}}
	for k, val := range args {
		m[k] = val
	}
	return m
}

// A client that renders views is shown the message, checked and not
// sent: the result's text says so (for a host that shows text), its
// structuredContent says it waits, and the view's data has From, the
// recipients, the subject, the bodies as written and each file with its
// name (exact: the view writes it as text), size and type.
func TestComposeViewPreparesAndSendsNothing(t *testing.T) {
	v := newViewHarness(t)
	res, data := v.prepare(v.message(nil))
	if v.sent() != 0 {
		t.Fatal("preparing sent a message")
	}
	if !strings.HasPrefix(res.text(), "Not sent yet: the user is reviewing this email") || !strings.Contains(res.text(), "Subject: Q3") ||
		!strings.Contains(res.text(), "Q3 report.pdf (26 B, application/pdf)") {
		t.Errorf("text:\n%s", res.text())
	}
	var sc PreparedResult
	if err := json.Unmarshal(res.StructuredContent, &sc); err != nil || !sc.Prepared.ExpiresAt.Equal(v.now.Add(prepared.TTL).Truncate(time.Second)) {
		t.Errorf("structuredContent %s (%v)", res.StructuredContent, err)
	}
	if data.From != sender || strings.Join(data.To, ",") != "ana@example.com" || data.Subject != "Q3" || data.BodyText != "Hi Ana,\nthe report." || data.Draft {
		t.Errorf("data %+v", data)
	}
	if len(data.Files) != 2 || data.Files[0].Name != "Q3 report.pdf" || data.Files[0].Bytes != 26 || data.Files[0].MimeType != "application/pdf" ||
		data.Files[1].Name != "<img src=x onerror=alert(1)>.txt" || !data.Files[0].Removable || data.Files[0].Goes != "attached" {
		t.Errorf("files %+v", data.Files)
	}
	if strings.Contains(res.text(), data.Prepared) || strings.Contains(string(res.StructuredContent), data.Prepared) {
		t.Error("the prepared id is where the model reads: it belongs in _meta alone")
	}
}

// Send with the user's edits sends exactly that: the edited recipient,
// subject and text, without the file removed; then the id is spent. Each
// edited field is read by send_email's own rules.
func TestSendPreparedSendsTheEditedMessageOnce(t *testing.T) {
	v := newViewHarness(t)
	_, data := v.prepare(v.message(nil))
	res := v.call("send_prepared", map[string]any{"prepared": data.Prepared, "to": []string{"Bo Berg <bo@example.com>"},
		"subject": "Q3, as promised", "body_text": "Hi Bo.", "drop": []int{1}})
	if res.IsError || v.sent() != 1 {
		t.Fatalf("send: %s (sent %d)", res.text(), v.sent())
	}
	var out struct {
		ID       string `json:"id"`
		Attached []struct {
			Name string `json:"name"`
		} `json:"attached"`
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || len(out.Attached) != 1 || out.Attached[0].Name != "Q3 report.pdf" {
		t.Fatalf("result %s", res.StructuredContent)
	}
	raw := string(v.env.Message(sender, out.ID))
	for _, want := range []string{"To: \"Bo Berg\" <bo@example.com>", "Subject: Q3, as promised", "Hi Bo."} {
		if !strings.Contains(raw, want) {
			t.Errorf("the message lacks %q:\n%.600s", want, raw)
		}
	}
	if strings.Contains(raw, "ana@example.com") || strings.Contains(raw, "onerror") {
		t.Error("the message went to the prepared recipient, or with the file removed")
	}
	v.mustRefuse("send_prepared", map[string]any{"prepared": data.Prepared}, "sent or cancelled already")
	if v.sent() != 1 {
		t.Error("the same id sent twice")
	}
}

// A refused edit (an address that is none, a file that is not there, an
// emptied message, anything else added) sends nothing and leaves the id
// for the user to mend and send.
func TestSendPreparedChecksEditsBeforeSpending(t *testing.T) {
	v := newViewHarness(t)
	_, data := v.prepare(v.message(nil))
	id := data.Prepared
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"a recipient that is not an address", map[string]any{"to": []string{"bo at example"}}, "bo at example"},
		{"a header injected into a recipient", map[string]any{"cc": []string{"a@example.com\r\nBcc: eve@example.com"}}, "cc"},
		{"a file the message does not have", map[string]any{"drop": []int{2}}, "\"drop\" names file 2"},
		{"every file and the text removed", map[string]any{"drop": []int{0, 1}, "body_text": ""}, "now empty"},
		{"a file added", map[string]any{"attachments": []string{v.pdf.ID}}, "attachments"},
		{"the sender changed", map[string]any{"from": "boss@example.com"}, "from"},
		{"no id", map[string]any{"prepared": ""}, "prepared"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"prepared": id}
			for k, val := range tc.args {
				args[k] = val
			}
			v.mustRefuse("send_prepared", args, tc.want)
		})
	}
	if v.sent() != 0 {
		t.Fatal("a refused edit sent a message")
	}
	if res := v.call("send_prepared", map[string]any{"prepared": id, "to": []string{"bo@example.com"}}); res.IsError || v.sent() != 1 {
		t.Errorf("the mended edit: %s", res.text())
	}
}

// Cancel sends nothing and spends the id; an id is its user's alone, and
// lives its 30 minutes.
func TestSendPreparedRefusals(t *testing.T) {
	v := newViewHarness(t)
	_, cancelled := v.prepare(v.message(nil))
	if res := v.call("send_prepared", map[string]any{"prepared": cancelled.Prepared, "cancel": true}); res.IsError || !strings.Contains(res.text(), "nothing was sent") {
		t.Fatalf("cancel: %s", res.text())
	}
	v.mustRefuse("send_prepared", map[string]any{"prepared": cancelled.Prepared}, "sent or cancelled already")
	v.mustRefuse("send_prepared", map[string]any{"prepared": cancelled.Prepared, "cancel": true}, "sent or cancelled already")

	_, theirs := v.prepare(v.message(nil))
	owner := v.user
	v.user.ID, v.user.Email = "u2", "bo@example.com"
	v.mustRefuse("send_prepared", map[string]any{"prepared": theirs.Prepared}, "not prepared for this user")
	v.user = owner

	_, late := v.prepare(v.message(nil))
	*v.now = v.now.Add(prepared.TTL)
	v.mustRefuse("send_prepared", map[string]any{"prepared": late.Prepared}, "waited longer than 30m0s")
	v.mustRefuse("send_prepared", map[string]any{"prepared": "dm_pp1.000000000000.AAAA"}, "not prepared for this user")
	if v.sent() != 0 {
		t.Fatal("a refused id sent a message")
	}
	// Its own user, in time, still sends the one another user could not.
	*v.now = v.now.Add(-prepared.TTL)
	if res := v.call("send_prepared", map[string]any{"prepared": theirs.Prepared}); res.IsError || v.sent() != 1 {
		t.Errorf("its own user: %s", res.text())
	}
}

// A file renamed after the user saw the message is not sent as it now
// is: the message is checked again as shown, refused, and prepared anew
// shows the new name.
func TestSendPreparedRefusesAChangedMessage(t *testing.T) {
	v := newViewHarness(t)
	_, data := v.prepare(v.message(nil))
	opts := append([]option.ClientOption{option.WithHTTPClient(v.env.Client(sender, emutest.ScopeDrive))}, v.env.Endpoints.DriveOptions()...)
	dsvc, err := drivev3.NewService(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dsvc.Files.Update(v.pdf.ID, &drivev3.File{Name: "Q3 report (draft).pdf"}).Do(); err != nil {
		t.Fatal(err)
	}
	v.mustRefuse("send_prepared", map[string]any{"prepared": data.Prepared, "to": []string{"bo@example.com"}}, "changed after the user saw it", "prepare it again")
	if v.sent() != 0 {
		t.Fatal("a changed message was sent")
	}
	if _, again := v.prepare(v.message(nil)); again.Files[0].Name != "Q3 report (draft).pdf" {
		t.Errorf("prepared again, the file is %q", again.Files[0].Name)
	}
}

// create_draft prepares too, and the view's Send saves the draft.
func TestComposeViewSavesADraft(t *testing.T) {
	v := newViewHarness(t)
	v.user.GoogleScopes = append(v.user.GoogleScopes, emutest.ScopeGmailCompose)
	v.overEmulator(v.env, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend, emutest.ScopeGmailCompose)
	v.deps.DraftsEnabled = true
	v.rebuild()
	raw := v.rpc("tools/call", map[string]any{"name": "create_draft", "arguments": v.message(nil)})
	var res struct {
		callResult
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError {
		t.Fatalf("create_draft: %v %s", err, raw)
	}
	var data ComposeData
	_ = json.Unmarshal(res.Meta[views.ComposeMeta], &data)
	if !data.Draft || !strings.Contains(res.text(), "reviewing this draft") {
		t.Fatalf("draft data %+v, text %s", data, res.text())
	}
	out := v.call("send_prepared", map[string]any{"prepared": data.Prepared})
	if out.IsError || !strings.Contains(out.text(), "Draft saved") || v.sent() != 0 {
		t.Errorf("save: %s (sent %d)", out.text(), v.sent())
	}
}

// A call too large for the view to keep is refused with the way out, and
// sends nothing; where the operator asks no questions (--confirm-sends
// off), or the client renders no views, send_email sends as it always did.
func TestComposeViewEdges(t *testing.T) {
	v := newViewHarness(t)
	v.mustRefuse("send_email", v.message(map[string]any{"body_text": strings.Repeat("x", prepared.MaxCallBytes)}),
		"too large for drivemail's compose view", "request_upload")
	if v.sent() != 0 {
		t.Fatal("a call too large for the view was sent")
	}
	v.ctx = context.Background()
	if res := v.call("send_email", v.message(nil)); res.IsError || v.sent() != 1 {
		t.Errorf("a client without views: %s", res.text())
	}
	v.ctx = views.WithRenders(context.Background(), true)
	v.deps.ConfirmSends = ConfirmOff
	v.rebuild()
	if res := v.call("send_email", v.message(nil)); res.IsError || v.sent() != 2 {
		t.Errorf("--confirm-sends off: %s", res.text())
	}
}

// viewsToolsListExtra is what a client that renders views carries more in
// its model's tools/list: send_email's and create_draft's links to the
// compose view and the prepared result in their output schemas (about
// 350 bytes). The host keeps send_prepared, an app-only tool, from the
// model.
const viewsToolsListExtra = 400

// TestViewsToolsListSize weighs the tools/list of a client that renders
// views as its model reads it (without the tools only a view may call),
// and on the wire. Run: go test ./tools -run TestViewsToolsListSize -v
func TestViewsToolsListSize(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Prepared = &prepared.Store{} })
	h.ctx = views.WithRenders(context.Background(), true)
	wire := h.rpc("tools/list", map[string]any{})
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(wire, &list); err != nil {
		t.Fatal(err)
	}
	var model []json.RawMessage
	for _, raw := range list.Tools {
		var tl struct {
			Meta struct {
				UI struct {
					Visibility []string `json:"visibility"`
				} `json:"ui"`
			} `json:"_meta"`
		}
		_ = json.Unmarshal(raw, &tl)
		if v := tl.Meta.UI.Visibility; len(v) == 0 || slices.Contains(v, "model") {
			model = append(model, raw)
		}
	}
	b, _ := json.Marshal(map[string]any{"tools": model})
	budget := toolsListBudget + viewsToolsListExtra
	t.Logf("tools/list for a client that renders views: %d bytes as its model reads it (budget %d), %d on the wire", len(b), budget, len(wire))
	if len(model) != len(list.Tools)-1 {
		t.Errorf("%d of %d tools are for the model; want all but send_prepared", len(model), len(list.Tools))
	}
	if len(b) > budget {
		t.Errorf("the model's tools/list is %d bytes, over its %d-byte budget", len(b), budget)
	}
}

// TestViewSnapshots: the tools that differ for a client that renders
// views, as tools/list returns them there. Rewrite with: go test ./tools
// -run TestViewSnapshots -update
func TestViewSnapshots(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Prepared = &prepared.Store{} })
	h.ctx = views.WithRenders(context.Background(), true)
	if written := checkVariantSnapshots(t, h, "views", "TestViewSnapshots"); !slices.Equal(written, []string{"create_draft", "send_email", "send_prepared"}) {
		t.Errorf("the tools that differ for a client that renders views are %v", written)
	}
	f, _ := fileHarness(t)
	f.ctx = h.ctx
	var list struct {
		Tools []struct {
			Name string         `json:"name"`
			Meta map[string]any `json:"_meta"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(f.rpc("tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "drive_pick" && tl.Meta["openai/outputTemplate"] != views.PickURI {
			t.Errorf("drive_pick's _meta for a client that renders views: %v", tl.Meta)
		}
	}
}
