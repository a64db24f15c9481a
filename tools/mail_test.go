package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/refusal"
)

const id33 = "1AbCdEfGhIjKlMnOpQrStUvWxYz012345"

func TestParseSendAccepts(t *testing.T) {
	cases := []struct {
		name string
		args string
		want compose.Request
	}{
		{
			name: "one address as a string, one attachment as a string",
			args: `{"to":"ana@example.com","cc":"cy@example.com","subject":"Q3","body_text":"Hi","attachments":"` + id33 + `"}`,
			want: compose.Request{To: []string{"ana@example.com"}, Cc: []string{"cy@example.com"}, Subject: "Q3", BodyText: "Hi",
				Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(id33)}}}},
		},
		{
			name: "comma-separated string and lists",
			args: `{"to":"ana@example.com, \"Lima, Bo\" <bo@example.com>","cc":["c@example.com"],"bcc":"d@example.com","subject":"s","body_html":"<p>x</p>"}`,
			want: compose.Request{To: []string{"ana@example.com", `"Lima, Bo" <bo@example.com>`}, Cc: []string{"c@example.com"},
				Bcc: []string{"d@example.com"}, Subject: "s", BodyHTML: "<p>x</p>"},
		},
		{
			name: "single attachment object with sloppy format",
			args: `{"to":["a@example.com"],"subject":"s","attachments":{"file_id":"` + id33 + `","as":" .PDF ","name":"Report"}}`,
			want: compose.Request{To: []string{"a@example.com"}, Subject: "s",
				Attachments: []compose.Attachment{{Name: "Report", Source: compose.DriveFile{Handle: handle.MustParse(id33), As: "pdf"}}}},
		},
		{
			name: "every source kind",
			args: `{"to":"a@example.com","subject":"s","attachments":[
				"mcp-file://drivemail.example.com/` + id33 + `",
				"https://docs.google.com/spreadsheets/d/` + id33 + `/edit#gid=0",
				{"file_id":"` + id33 + `","as":"csv","sheet":" Q3 "},
				{"file_id":"` + id33 + `","link":"true"},
				{"name":"notes.csv","text":"a,b\n1,2"},
				{"name":"x.bin","base64":"AAEC","mime_type":"application/octet-stream"},
				{"name":"dot.png","content":"data:image/png;base64,iVBORw0KGgo="},
				"{\"file_name\":\"hello.txt\",\"mime_type\":\"text/plain\",\"base64\":\"aGVsbG8=\"}",
				"{\"file_id\":\"` + id33 + `\",\"as\":\"docx\"}"
			]}`,
			want: compose.Request{To: []string{"a@example.com"}, Subject: "s", Attachments: []compose.Attachment{
				{Source: compose.DriveFile{Handle: handle.MustParse("mcp-file://drivemail.example.com/" + id33)}},
				{Source: compose.DriveFile{Handle: handle.MustParse(id33)}},
				{Source: compose.DriveFile{Handle: handle.MustParse(id33), As: "csv", Sheet: "Q3"}},
				{Source: compose.DriveFile{Handle: handle.MustParse(id33), Link: true}},
				{Name: "notes.csv", Source: compose.Content{Encoding: compose.Text, Data: "a,b\n1,2"}},
				{Name: "x.bin", Source: compose.Content{Encoding: compose.Base64, Data: "AAEC", MimeType: "application/octet-stream"}},
				{Name: "dot.png", Source: compose.Content{Encoding: compose.DataURI, Data: "data:image/png;base64,iVBORw0KGgo="}},
				{Name: "hello.txt", Source: compose.Content{Encoding: compose.Base64, Data: "aGVsbG8=", MimeType: "text/plain"}},
				{Source: compose.DriveFile{Handle: handle.MustParse(id33), As: "docx"}},
			}},
		},
		{
			name: "a file envelope as content takes its name and type from the envelope",
			args: `{"to":"a@example.com","subject":"s","attachments":[{"content":"{\"file_name\":\"hello.txt\",\"mime_type\":\"text/plain\",\"base64\":\"aGVsbG8=\"}"}]}`,
			want: compose.Request{To: []string{"a@example.com"}, Subject: "s", Attachments: []compose.Attachment{
				{Name: "hello.txt", Source: compose.Content{Encoding: compose.Base64, Data: "aGVsbG8=", MimeType: "text/plain"}}}},
		},
		{
			name: "a file envelope as content keeps the object's own name and type",
			args: `{"to":"a@example.com","subject":"s","attachments":{"name":"x","mime_type":"text/csv","content":" {\"file_name\":\"hello.txt\",\"mime_type\":\"text/plain\",\"base64\":\"aGVsbG8=\"}"}}`,
			want: compose.Request{To: []string{"a@example.com"}, Subject: "s", Attachments: []compose.Attachment{
				{Name: "x", Source: compose.Content{Encoding: compose.Base64, Data: "aGVsbG8=", MimeType: "text/csv"}}}},
		},
		{
			name: "the spellings other mail tools use",
			args: `{"to":"a@example.com","subject":"s","body":"Hi","html":"<p>Hi</p>","attachments":[
				{"id":"` + id33 + `"},
				{"url":"https://drive.google.com/file/d/` + id33 + `/view?resourcekey=0-k"},
				{"url":"mcp-file://dm.example.com/` + id33 + `"},
				{"fileId":"` + id33 + `","filename":"Report"},
				{"file_name":"n.csv","text":"a,b","contentType":"text/csv"},
				{"FILE_ID":"` + id33 + `","AS":"pdf"}
			]}`,
			want: compose.Request{To: []string{"a@example.com"}, Subject: "s", BodyText: "Hi", BodyHTML: "<p>Hi</p>", Attachments: []compose.Attachment{
				{Source: compose.DriveFile{Handle: handle.MustParse(id33)}},
				{Source: compose.DriveFile{Handle: handle.MustParse("https://drive.google.com/file/d/" + id33 + "/view?resourcekey=0-k")}},
				{Source: compose.DriveFile{Handle: handle.MustParse("mcp-file://dm.example.com/" + id33)}},
				{Name: "Report", Source: compose.DriveFile{Handle: handle.MustParse(id33)}},
				{Name: "n.csv", Source: compose.Content{Encoding: compose.Text, Data: "a,b", MimeType: "text/csv"}},
				{Source: compose.DriveFile{Handle: handle.MustParse(id33), As: "pdf"}},
			}},
		},
		{
			name: "threading",
			args: `{"to":"a@example.com","subject":"Re: s","body_text":"ok","thread_id":"t1","in_reply_to":"<m@x>","attachments":null}`,
			want: compose.Request{To: []string{"a@example.com"}, Subject: "Re: s", BodyText: "ok", ThreadID: "t1", InReplyTo: "<m@x>"},
		},
		{
			name: "references as a list",
			args: `{"to":"a@example.com","subject":"Re: s","body_text":"ok","thread_id":"t1","references":["<a@x>","<b@x>"]}`,
			want: compose.Request{To: []string{"a@example.com"}, Subject: "Re: s", BodyText: "ok", ThreadID: "t1", References: []string{"<a@x>", "<b@x>"}},
		},
		{
			name: "references as one string, as the header has them",
			args: `{"to":"a@example.com","subject":"Re: s","body_text":"ok","in_reply_to":"<b@x>","references":"<a@x> <b@x>"}`,
			want: compose.Request{To: []string{"a@example.com"}, Subject: "Re: s", BodyText: "ok", InReplyTo: "<b@x>", References: []string{"<a@x> <b@x>"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseSend([]byte(c.args), "send_email", false)
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseSendRefuses(t *testing.T) {
	cases := []struct {
		name  string
		args  string
		wants []string
	}{
		{"not an object", `["a"]`, []string{"JSON object", `"to"`}},
		{"unknown field with a hint", `{"to":"a@example.com","subject":"s","attachment":"x"}`, []string{`"attachment"`, `Did you mean "attachments"?`}},
		{"no recipient", `{"subject":"s","body_text":"b"}`, []string{`"to" is required`}},
		{"empty recipient list", `{"to":[],"subject":"s","body_text":"b"}`, []string{`"to" is required`}},
		{"recipient of the wrong type", `{"to":42,"subject":"s","body_text":"b"}`, []string{`"to" must be a list`}},
		{"no subject", `{"to":"a@example.com","body_text":"b"}`, []string{`"subject" is required`}},
		{"references not strings", `{"to":"a@example.com","subject":"s","body_text":"b","references":[1,2]}`, []string{`"references" must be a list of Message-IDs`}},
		{"subject not a string", `{"to":"a@example.com","subject":7,"body_text":"b"}`, []string{`"subject" must be a string, not a number.`}},
		{"empty message", `{"to":"a@example.com","subject":"s"}`, []string{"empty", "body_text"}},
		{"unknown attachment field", `{"to":"a@example.com","subject":"s","attachments":[{"file_id":"` + id33 + `","format":"pdf"}]}`,
			[]string{"Attachment 1", `"format"`, `"file_id", "as", "sheet", "name", "link", "share", "text", "base64", "content", "mime_type"`}},
		{"two sources", `{"to":"a@example.com","subject":"s","attachments":[{"file_id":"` + id33 + `","text":"x","name":"a.txt"}]}`,
			[]string{"Attachment 1", `"file_id", "text"`, "exactly one source"}},
		{"no source", `{"to":"a@example.com","subject":"s","attachments":[{"name":"a.txt"}]}`, []string{"Attachment 1 has no source", "drive_search"}},
		{"as on inline content", `{"to":"a@example.com","subject":"s","attachments":[{"name":"a.txt","text":"x","as":"pdf"}]}`, []string{`"as" applies only to a Drive file`, "Leave it out for content written into the call"}},
		{"mime_type on a Drive file", `{"to":"a@example.com","subject":"s","attachments":[{"file_id":"` + id33 + `","mime_type":"application/pdf"}]}`, []string{`"mime_type" applies only`}},
		{"link not boolean", `{"to":"a@example.com","subject":"s","attachments":[{"file_id":"` + id33 + `","link":"maybe"}]}`, []string{`"link" must be true or false, not "maybe".`}},
		{"file name instead of id", `{"to":"a@example.com","subject":"s","attachments":["Q3 report.pdf"]}`, []string{"Attachment 1", "not a Drive file id", "drive_search"}},
		{"foreign link", `{"to":"a@example.com","subject":"s","attachments":["https://example.com/x.pdf"]}`, []string{"is a link, not a Drive file id"}},
		{"empty string", `{"to":"a@example.com","subject":"s","attachments":[""]}`, []string{"Attachment 1 is empty"}},
		{"bare data URI", `{"to":"a@example.com","subject":"s","attachments":["data:text/plain;base64,eA=="]}`, []string{"data: URI without a file name", `"content"`}},
		{"number", `{"to":"a@example.com","subject":"s","attachments":[42]}`, []string{"Attachment 1 must be a Drive file id"}},
		{"broken JSON string", `{"to":"a@example.com","subject":"s","attachments":["{not json"]}`, []string{"looks like JSON"}},
		{"envelope without bytes", `{"to":"a@example.com","subject":"s","attachments":["{\"file_name\":\"a.txt\"}"]}`, []string{`"base64" is required`}},
		{"envelope with extra field", `{"to":"a@example.com","subject":"s","attachments":["{\"file_name\":\"a.txt\",\"base64\":\"eA==\",\"url\":\"x\"}"]}`, []string{"file envelope", `"url"`}},
		{"envelope content without bytes", `{"to":"a@example.com","subject":"s","attachments":[{"name":"a.txt","content":"{\"file_name\":\"a.txt\"}"}]}`,
			[]string{`"content"`, `"base64" is required`}},
		{"envelope content with extra field", `{"to":"a@example.com","subject":"s","attachments":[{"content":"{\"file_name\":\"a.txt\",\"base64\":\"eA==\",\"url\":\"x\"}"}]}`,
			[]string{"file envelope", `"url"`, `"file_name", "mime_type", "base64"`}},
		{"broken envelope content", `{"to":"a@example.com","subject":"s","attachments":[{"name":"a.txt","content":"{\"file_name\":"}]}`,
			[]string{`"content" starts like a JSON file envelope but does not parse`, "base64 or a data: URI"}},
		{"body twice", `{"to":"a@example.com","subject":"s","body":"a","body_text":"b"}`, []string{`has both "body" and "body_text"`, `give "body_text" only`}},
		{"file id twice", `{"to":"a@example.com","subject":"s","attachments":[{"id":"` + id33 + `","file_id":"` + id33 + `"}]}`, []string{"Attachment 1 has both", `give "file_id" only`}},
		{"a web link as url", `{"to":"a@example.com","subject":"s","attachments":[{"url":"https://example.com/report.pdf"}]}`,
			[]string{"Attachment 1", "is a link, not a Drive file id", "does not download web pages", "write it in the body"}},
		{"a broken upload handle", `{"to":"a@example.com","subject":"s","attachments":["mcp-file://h/a/b"]}`, []string{"not an mcp-file:// handle of one file", "unchanged"}},
		{"second entry named", `{"to":"a@example.com","subject":"s","attachments":["` + id33 + `",{"file_id":"bad id!"}]}`, []string{"Attachment 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseSend([]byte(c.args), "send_email", false)
			r, ok := refusal.As(err)
			if !ok {
				t.Fatalf("want a refusal, got %v", err)
			}
			text := r.Text
			if !startsLikeASentence(text) {
				t.Errorf("refusal %q does not start like a sentence", text)
			}
			for _, w := range c.wants {
				if !strings.Contains(text, w) {
					t.Errorf("refusal %q lacks %q", text, w)
				}
			}
		})
	}
}

// TestAttachmentEntryLimit checks the runaway-list guard at its edge.
func TestAttachmentEntryLimit(t *testing.T) {
	list := func(n int) string {
		items := make([]string, n)
		for i := range items {
			items[i] = `"` + id33 + `"`
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	got, err := parseAttachments(json.RawMessage(list(compose.MaxEntries)))
	if err != nil || len(got) != compose.MaxEntries {
		t.Fatalf("%d entries: %v, %d parsed", compose.MaxEntries, err, len(got))
	}
	_, err = parseAttachments(json.RawMessage(list(compose.MaxEntries + 1)))
	if r, ok := refusal.As(err); !ok || !strings.Contains(r.Text, "at most 10 files") {
		t.Fatalf("%d entries: want a refusal, got %v", compose.MaxEntries+1, err)
	}
}

func TestSendEmailCallsComposeAndShapesTheResult(t *testing.T) {
	h := newHarness(t, nil)
	h.mail.res = compose.Result{
		ID: "m1", ThreadID: "t1", SizeBytes: 2048,
		Attached: []compose.Attached{{FileID: id33, Name: "Budget.xlsx", MimeType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", Bytes: 1500, ExportedAs: "xlsx"}},
		Linked: []compose.Linked{
			{FileID: "doc1", Name: "Plan", URL: "https://docs.google.com/document/d/doc1/edit", Access: compose.AccessOpen},
			{FileID: "doc2", Name: "Notes", URL: "https://docs.google.com/document/d/doc2/edit", Access: compose.AccessOpen,
				SharedWith: []string{"bob@other.org"}, SharedRole: "reader"},
			{FileID: "doc3", Name: "Theirs", URL: "https://docs.google.com/document/d/doc3/edit", Access: compose.AccessUnchecked,
				AccessNote: "drivemail could not check that the recipients can open it: the user may not change this file's sharing."},
		},
	}
	res := h.call("send_email", map[string]any{"to": "ana@example.com", "subject": "Q3", "body_text": "Hi",
		"attachments": []any{map[string]any{"file_id": id33, "as": "XLSX"}, "doc1doc1doc1", map[string]any{"file_id": "doc2doc2doc2", "share": " Reader "}}})
	if res.IsError {
		t.Fatalf("refused: %s", res.text())
	}
	if h.mail.called != 1 || h.mail.opts.Draft {
		t.Fatalf("compose called %d times, draft=%v", h.mail.called, h.mail.opts.Draft)
	}
	if h.mail.req.Attachments[0].Source.(compose.DriveFile).As != "xlsx" {
		t.Errorf("as = %q, want xlsx", h.mail.req.Attachments[0].Source.(compose.DriveFile).As)
	}
	if share := h.mail.req.Attachments[2].Source.(compose.DriveFile).Share; share != "reader" {
		t.Errorf("share = %q, want reader", share)
	}
	if h.mail.opts.Progress != nil {
		t.Error("progress callback set although the caller sent no progress token")
	}
	var out compose.Result
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	if out.ID != "m1" || out.ThreadID != "t1" || len(out.Attached) != 1 || out.Inline == nil {
		t.Errorf("structuredContent = %+v", out)
	}
	for _, w := range []string{"Sent to ana@example.com", "message id m1", "Budget.xlsx", "exported as xlsx", "Plan https://docs.google.com/document/d/doc1/edit;",
		"Notes https://docs.google.com/document/d/doc2/edit (drivemail shared it with bob@other.org as reader)",
		"Theirs https://docs.google.com/document/d/doc3/edit (drivemail could not check that the recipients can open it: the user may not change this file's sharing)"} {
		if !strings.Contains(res.text(), w) {
			t.Errorf("text %q lacks %q", res.text(), w)
		}
	}
}

func TestSendEmailRefusalsNeverReachCompose(t *testing.T) {
	h := newHarness(t, nil)
	h.mustRefuse("send_email", `{"to":"a@example.com","subject":"s","attachments":[{"file_id":"`+id33+`","format":"pdf"}]}`, `"format"`)
	if h.mail.called != 0 {
		t.Fatalf("compose was called %d times for a refused request", h.mail.called)
	}
}

func TestSendEmailErrors(t *testing.T) {
	secret := `googleapi: Error 403: token ya29.SECRET rejected, body {"error":"x"}`
	cases := []struct {
		name    string
		err     error
		want    []string
		notWant []string
		logged  bool
	}{
		{"a refusal", refusal.New("too_many_files", "Too many files: 11; send at most 10."), []string{"Too many files: 11"}, nil, false},
		{"a refusal wrapped", fmt.Errorf("plan: %w", refusal.New("blocked_type", "Attachment 1: report.zip contains setup.exe; Gmail blocks .exe files.")),
			[]string{"report.zip contains setup.exe"}, []string{"plan:"}, false},
		{"internal error", fmt.Errorf("gmail upload: %w", errors.New(secret)),
			[]string{"internal error", "req-42", "Sent and Drafts"}, []string{"ya29", "googleapi", "403", "Nothing was"}, true},
		{"internal error, provably unsent", &refusal.Unsent{Err: fmt.Errorf("gmail upload: %w", errors.New(secret))},
			[]string{"internal error", "req-42", "Nothing was sent, so trying again cannot send it twice."}, []string{"ya29", "Sent and Drafts", "may"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.mail.err = c.err
			res := h.mustRefuse("send_email", `{"to":"a@example.com","subject":"s","body_text":"b"}`, c.want...)
			for _, nw := range c.notWant {
				if strings.Contains(res.text(), nw) {
					t.Errorf("result %q leaks %q", res.text(), nw)
				}
			}
			if got := strings.Contains(h.logs.String(), "tool failed"); got != c.logged {
				t.Errorf("logged as failure = %v, want %v; log:\n%s", got, c.logged, h.logs)
			}
		})
	}
}

// TestFailedToolLogsNoQuotedText: an internal error's log line keeps what
// failed but not the file names or addresses the error quoted.
func TestFailedToolLogsNoQuotedText(t *testing.T) {
	h := newHarness(t, nil)
	h.mail.err = fmt.Errorf("resolve attachment 1 (%q) for %q: %w", `Secret "plan".pdf`, "carol@example.com", errors.New("connection reset"))
	h.mustRefuse("send_email", `{"to":"a@example.com","subject":"s","body_text":"b"}`, "internal error")
	logs := h.logs.String()
	if !strings.Contains(logs, `resolve attachment 1 (\"…\") for \"…\": connection reset`) {
		t.Errorf("the log line should keep what failed:\n%s", logs)
	}
	for _, secret := range []string{"Secret", "plan", "carol"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log shows %q:\n%s", secret, logs)
		}
	}
}

func TestCreateDraft(t *testing.T) {
	args := `{"to":"a@example.com","subject":"s","body_text":"b"}`
	t.Run("without the compose scope, drafts enabled", func(t *testing.T) {
		h := newHarness(t, func(d *Deps) { d.DraftsEnabled = true })
		h.mustRefuse("create_draft", args, "reconnect drivemail", "send_email")
		if h.mail.called != 0 {
			t.Fatal("compose called without the scope")
		}
	})
	t.Run("without the compose scope, drafts disabled", func(t *testing.T) {
		h := newHarness(t, nil)
		h.mustRefuse("create_draft", args, "--drafts", "send_email")
	})
	t.Run("an internal error that saved nothing", func(t *testing.T) {
		h := newHarness(t, func(d *Deps) { d.DraftsEnabled = true })
		h.user.GoogleScopes = append(h.user.GoogleScopes, "https://www.googleapis.com/auth/gmail.compose")
		h.mail.err = &refusal.Unsent{Err: errors.New("drive broke")}
		res := h.mustRefuse("create_draft", args, "internal error", "Nothing was saved, so trying again cannot make a second draft.")
		if strings.Contains(res.text(), "sent") {
			t.Errorf("a draft's error speaks of sending: %s", res.text())
		}
	})
	t.Run("with the compose scope", func(t *testing.T) {
		h := newHarness(t, func(d *Deps) { d.DraftsEnabled = true })
		h.user.GoogleScopes = append(h.user.GoogleScopes, "https://www.googleapis.com/auth/gmail.compose")
		h.mail.res = compose.Result{ID: "m2", ThreadID: "t2", DraftID: "r-9"}
		res := h.call("create_draft", args)
		if res.IsError {
			t.Fatalf("refused: %s", res.text())
		}
		if !h.mail.opts.Draft {
			t.Error("compose not asked for a draft")
		}
		if !strings.Contains(string(res.StructuredContent), `"draft_id":"r-9"`) || !strings.Contains(res.text(), "Draft saved (draft id r-9") {
			t.Errorf("result = %s / %s", res.StructuredContent, res.text())
		}
	})
}

func TestPanicBecomesAGenericError(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.Mail = panicMail{} })
	res := h.mustRefuse("send_email", `{"to":"a@example.com","subject":"s","body_text":"b"}`, "internal error", "req-42")
	if strings.Contains(res.text(), "boom") {
		t.Errorf("panic value leaked: %s", res.text())
	}
	if !strings.Contains(h.logs.String(), "tool panicked") {
		t.Errorf("panic not logged:\n%s", h.logs)
	}
}

type panicMail struct{}

func (panicMail) Send(ctx context.Context, _ *account.Account, req compose.Request, opts SendOptions) (compose.Result, error) {
	panic("boom")
}

func (panicMail) SendDraft(context.Context, *account.Account, string, func(context.Context, compose.Summary) error) (compose.DraftSent, error) {
	panic("boom")
}

// TestSendResultsCarryTheMessageID: the Message-ID a reply needs is in the
// structured result and in the text, and the text says how a reply was
// threaded when Gmail or drivemail did something the caller may not expect.
func TestSendResultsCarryTheMessageID(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    string
		res     compose.Result
		want    []string
		notWant []string
	}{
		{"a new message", `{"to":"a@example.com","subject":"Plan","body_text":"b"}`,
			compose.Result{ID: "m1", ThreadID: "m1", MessageID: "<u1@example.com>", Subject: "Plan"},
			[]string{"message id m1, thread m1, Message-ID <u1@example.com>"}, []string{"conversation", "subject went"}},
		{"a threaded reply", `{"to":"a@example.com","subject":"Plan","body_text":"b","thread_id":"t1","in_reply_to":"<u1@example.com>"}`,
			compose.Result{ID: "m2", ThreadID: "t1", MessageID: "<u2@example.com>", Subject: "Re: Plan"},
			[]string{"Message-ID <u2@example.com>", `The subject went as "Re: Plan", as a reply's.`}, []string{"new conversation"}},
		{"a reply Gmail did not thread", `{"to":"a@example.com","subject":"Budget","body_text":"b","thread_id":"t1","in_reply_to":"<u1@example.com>"}`,
			compose.Result{ID: "m3", ThreadID: "m3", MessageID: "<u3@example.com>", Subject: "Re: Budget"},
			[]string{"Gmail put it in a new conversation (thread m3), not in thread t1", "the subject is the thread's own"}, nil},
		{"a reply given the thread's subject", `{"to":"a@example.com","subject":"Budget","body_text":"b","thread_id":"t1","in_reply_to":"<u1@example.com>"}`,
			compose.Result{ID: "m5", ThreadID: "t1", MessageID: "<u5@example.com>", Subject: "Re: Plan", SubjectFromThread: true},
			[]string{`The subject went as "Re: Plan", the thread's: Gmail keeps a reply in its thread only when the subjects match.`}, []string{"as a reply's", "new conversation"}},
		{"a forward", `{"forward":"18f3a2b4c5d6e7f8","to":"a@example.com"}`,
			compose.Result{ID: "m6", ThreadID: "m6", MessageID: "<u6@example.com>", Subject: "Fwd: Plan"},
			[]string{`The subject went as "Fwd: Plan", as a forward's.`}, []string{"reply", "conversation"}},
		{"a reply without thread_id", `{"to":"a@example.com","subject":"Re: Plan","body_text":"b","in_reply_to":"<u1@example.com>"}`,
			compose.Result{ID: "m4", ThreadID: "m4", MessageID: "<u4@example.com>", Subject: "Re: Plan"},
			[]string{"The recipients' mail programs thread it", "as no thread_id was given"}, []string{"subject went"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			if strings.Contains(tc.args, `"forward"`) {
				h, _, _ = mailHarness(t, true, true)
			}
			h.mail.res = tc.res
			res := h.call("send_email", tc.args)
			if res.IsError {
				t.Fatalf("refused: %s", res.text())
			}
			var out map[string]any
			if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out["message_id"] != tc.res.MessageID {
				t.Errorf("structuredContent %s: want message_id %q", res.StructuredContent, tc.res.MessageID)
			}
			if _, ok := out["subject"]; ok {
				t.Errorf("structuredContent %s has a subject, which the output schema does not", res.StructuredContent)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.text(), w) {
					t.Errorf("text %q lacks %q", res.text(), w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(res.text(), w) {
					t.Errorf("text %q says %q", res.text(), w)
				}
			}
		})
	}
}

// TestSendReadsThreadsOnlyWhereMailMayBeRead: a send may read its
// thread (SendOptions.ReadMail) only on a server that asks for a Gmail
// read scope, for a user who granted it.
func TestSendReadsThreadsOnlyWhereMailMayBeRead(t *testing.T) {
	for _, tc := range []struct {
		name             string
		enabled, granted bool
	}{
		{"server and user", true, true},
		{"server, not the user", true, false},
		{"the user's grant, not the server", false, true},
		{"neither", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(d *Deps) { d.ReadMailEnabled, d.MailReader, d.Saver = tc.enabled, &fakeMailReader{}, &fakeSaver{} })
			if tc.granted {
				h.user.GoogleScopes = append(h.user.GoogleScopes, scopeReadonly)
			}
			h.mail.res = compose.Result{ID: "m2", ThreadID: "t1", MessageID: "<u2@example.com>", Subject: "Re: Plan"}
			if res := h.call("send_email", `{"to":"a@example.com","subject":"Plan","body_text":"b","thread_id":"t1","in_reply_to":"<u1@example.com>"}`); res.IsError {
				t.Fatalf("refused: %s", res.text())
			}
			if want := tc.enabled && tc.granted; h.mail.opts.ReadMail != want {
				t.Errorf("ReadMail %v, want %v", h.mail.opts.ReadMail, want)
			}
		})
	}
}

// TestThreadSubjectEndToEnd: through the real compose and an emulator,
// for a user who reads mail, a thread_id reply of another subject goes
// with the thread's, stays in the thread, and the result says so.
func TestThreadSubjectEndToEnd(t *testing.T) {
	env := emutest.Start(t)
	svc := compose.New(compose.Config{})
	h := newHarness(t, func(d *Deps) {
		d.ReadMailEnabled, d.MailReader, d.Saver = true, &fakeMailReader{}, &fakeSaver{}
		d.Mail = composeMail{svc: svc}
	})
	h.overEmulator(env, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend, emutest.ScopeGmailReadonly)
	h.user.GoogleScopes = append(h.user.GoogleScopes, scopeReadonly)
	got, err := env.Emu.Gmail().Deliver(sender, strings.NewReader("From: Dana <dana@example.org>\r\nTo: "+sender+
		"\r\nSubject: Q3 Plan\r\nMessage-ID: <q3@example.org>\r\n\r\nThe plan.\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := h.call("send_email", map[string]any{"to": "dana@example.org", "subject": "Budget", "body_text": "Looks right.",
		"thread_id": got.ThreadID, "in_reply_to": "<q3@example.org>"})
	if res.IsError {
		t.Fatalf("refused: %s", res.text())
	}
	var out struct {
		ThreadID string `json:"thread_id"`
	}
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.ThreadID != got.ThreadID {
		t.Errorf("thread %q (%v), want %s", out.ThreadID, err, got.ThreadID)
	}
	if want := `The subject went as "Re: Q3 Plan", the thread's: Gmail keeps a reply in its thread only when the subjects match.`; !strings.Contains(res.text(), want) ||
		strings.Contains(res.text(), "new conversation") {
		t.Errorf("text %q, want %q and no new conversation", res.text(), want)
	}
}

// TestToolCallLineNamesTheRefusalKind: the "tool call" log line names a
// refusal by its kind, never by its sentence, and an internal error by
// none.
func TestToolCallLineNamesTheRefusalKind(t *testing.T) {
	h := newHarness(t, nil)
	h.mustRefuse("send_email", `{"to":"a@example.com","subject":"s","attachments":["Q3 secret.pdf"]}`, "not a Drive file id")
	h.mail.err = errors.New("boom")
	h.mustRefuse("send_email", `{"to":"a@example.com","subject":"s","body_text":"b"}`, "internal error")
	lines := strings.Split(strings.TrimSpace(h.logs.String()), "\n")
	var calls []string
	for _, l := range lines {
		if strings.Contains(l, `msg="tool call"`) {
			calls = append(calls, l)
		}
	}
	if len(calls) != 2 || !strings.Contains(calls[0], "outcome=error refusal=bad_file_id") || strings.Contains(calls[0], "secret") ||
		!strings.Contains(calls[1], "outcome=error") || strings.Contains(calls[1], "refusal=") {
		t.Errorf("tool call lines:\n%s", strings.Join(calls, "\n"))
	}
}
