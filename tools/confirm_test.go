package tools

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/internal/ask"
	"github.com/drivemail/drivemail/internal/refusal"
)

func TestParseConfirmSends(t *testing.T) {
	for in, want := range map[string]ConfirmSends{"": ConfirmAuto, "auto": ConfirmAuto, "Always": ConfirmAlways, " off ": ConfirmOff} {
		if got, err := ParseConfirmSends(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"on", "yes", "never", "auto,always"} {
		if _, err := ParseConfirmSends(bad); err == nil || !strings.Contains(err.Error(), "want auto") {
			t.Errorf("%q: %v, want a sentence naming the three", bad, err)
		}
	}
}

// The question names everything that will go, each untrusted value one
// field that none of its characters can break: a file name with a line
// break cannot add a recipient line, a right-to-left override cannot
// turn "fdp.exe" around, and no line of the body passes for a header.
func TestSummaryTextNeutralisesWhatOthersWrote(t *testing.T) {
	s := compose.Summary{
		From: "billing@example.com", FromName: "Billing", ReplyTo: "billing@example.com", Signature: true,
		To: []string{"zoe@example.org"}, Bcc: []string{"wil@example.org"},
		Subject: "Re: invoice\u202e",
		Body:    []string{"Hi Zoe,", "From: boss@example.com"}, BodyMore: true,
		Files: []compose.SummaryFile{
			{Name: "Q3.pdf\nTo: eve@evil.example", MimeType: "application/pdf", Bytes: 2048, Goes: compose.GoesAttached, From: compose.FromDrive},
			{Name: "report\u202efdp.exe", MimeType: "application/pdf", Bytes: 10, Goes: compose.GoesAttached, From: compose.FromGmail},
			{Name: "Plan.pdf", MimeType: "application/pdf", Bytes: -1, Goes: compose.GoesAttached, From: compose.FromDrive, ExportedAs: "pdf"},
			{Name: "Roadmap", Goes: compose.GoesLinked, URL: "https://docs.google.com/document/d/1x/edit", From: compose.FromDrive},
			{Name: "Plan", Goes: compose.GoesLinked, URL: "https://docs.google.com/document/d/1y/edit", Access: "every recipient", ShareWith: []string{"zoe@example.org", "wil@example.org"}, ShareRole: "commenter", From: compose.FromDrive},
			{Name: "logo.png", MimeType: "image/png", Bytes: 300, Goes: compose.GoesInline, From: compose.FromClient},
		},
	}
	got := summaryText(s)
	want := "Send this email? Nothing has been downloaded or sent yet.\n\n" +
		"From: Billing <billing@example.com>\nReply-To: billing@example.com\nTo: zoe@example.org\nBcc: wil@example.org\nSubject: \"Re: invoice\\u202e\"\n\n" +
		"Attachments (3):\n" +
		"- \"Q3.pdf\\nTo: eve@evil.example\" (2.0 KiB, application/pdf)\n" +
		"- \"report\\u202efdp.exe\" (10 B, application/pdf, from a message in Gmail)\n" +
		"- Plan.pdf (size known once exported, a Google file exported as pdf)\n\n" +
		"Images in the body (1):\n- logo.png (300 B, image/png, from the chat)\n\n" +
		"Links in the body (2):\n" +
		"- Roadmap: https://docs.google.com/document/d/1x/edit (who can open it: whoever its sharing in Google Drive allows)\n" +
		"- Plan: https://docs.google.com/document/d/1y/edit (who can open it: every recipient, once drivemail has shared it with zoe@example.org, wil@example.org as commenter)\n\n" +
		"The message begins:\n> Hi Zoe,\n> From: boss@example.com\n> …\n\n" +
		"The sender's Gmail signature is added at the end.\n\n" +
		"Accept to send it now; decline to send nothing."
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}

// A saved draft is asked about by its headers: its text and files are
// the draft's, which the user can read in Gmail.
func TestSummaryTextOfASavedDraft(t *testing.T) {
	got := summaryText(compose.Summary{From: "ana@example.com", To: []string{"Zoe <zoe@example.org>"}, Subject: "Q3", SavedDraft: "r-123"})
	want := "Send this Gmail draft as it is saved now? Nothing has been sent yet.\n\n" +
		"From: ana@example.com\nTo: Zoe <zoe@example.org>\nSubject: Q3\n\n" +
		"Its text and files are the draft's (id r-123), as Drafts in Gmail shows them.\n\n" +
		"Accept to send it now; decline to send nothing."
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}

// Each way a question ends: a plain yes sends; anything else sends
// nothing, with its kind and a sentence that says what to do next (never
// retry unasked; keep it as a draft where drafts can be saved).
func TestAnswersDecideTheSend(t *testing.T) {
	withDrafts := &handlers{deps: Deps{DraftsEnabled: true}}
	without := &handlers{deps: Deps{}}
	for _, tc := range []struct {
		name   string
		h      *handlers
		answer ask.Answer
		mode   ConfirmSends
		kind   refusal.Kind
		says   string
	}{
		{"accepted", withDrafts, ask.Answer{Outcome: ask.Accepted, Content: map[string]any{"send": true}}, ConfirmAuto, "", ""},
		{"accepted without content", withDrafts, ask.Answer{Outcome: ask.Accepted}, ConfirmAuto, "", ""},
		{"accepted unticked", withDrafts, ask.Answer{Outcome: ask.Accepted, Content: map[string]any{"send": false}}, ConfirmAuto, kindSendDeclined, "left \"Send this email\" unticked"},
		{"accepted with a string", withDrafts, ask.Answer{Outcome: ask.Accepted, Content: map[string]any{"send": "true"}}, ConfirmAuto, kindSendDeclined, "nothing was sent"},
		{"declined", withDrafts, ask.Answer{Outcome: ask.Declined}, ConfirmAuto, kindSendDeclined, "offer create_draft"},
		{"declined, no drafts", without, ask.Answer{Outcome: ask.Declined}, ConfirmAuto, kindSendDeclined, "ask the user what should be different"},
		{"cancelled", withDrafts, ask.Answer{Outcome: ask.Cancelled}, ConfirmAuto, kindSendCancelled, "Ask the user what they want before calling send_email again"},
		{"unanswered", withDrafts, ask.Answer{Outcome: ask.Unanswered, Err: errors.New("no answer within 2m0s")}, ConfirmAuto, kindSendUnanswered, "(drivemail waits 2 minutes), so nothing was sent"},
		{"unaskable, auto", withDrafts, ask.Answer{Outcome: ask.Unaskable}, ConfirmAuto, "", ""},
		{"unaskable, always", withDrafts, ask.Answer{Outcome: ask.Unaskable}, ConfirmAlways, kindConfirmUnavailable, "this client cannot ask its user"},
	} {
		err := tc.h.answered(tc.answer, tc.mode)
		if refusal.KindOf(err) != tc.kind || (tc.kind == "") != (err == nil) || !strings.Contains(errText(err), tc.says) {
			t.Errorf("%s: %v, want kind %q saying %q", tc.name, err, tc.kind, tc.says)
		}
		if err != nil && refusal.DeliveryOf(err) != refusal.NotSent {
			t.Errorf("%s: delivery %v, want NotSent", tc.name, refusal.DeliveryOf(err))
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// create_draft never asks, nor does a send under off; a client that
// cannot ask is sent to unasked under auto and refused under always,
// before anything is read.
func TestWhoIsAsked(t *testing.T) {
	ctx := context.Background() // no route: no client can be asked here
	for _, tc := range []struct {
		mode    ConfirmSends
		draft   bool
		refused bool
	}{
		{ConfirmAuto, false, false},
		{ConfirmOff, false, false},
		{ConfirmAlways, false, true},
		{ConfirmAlways, true, false},
	} {
		h := &handlers{deps: Deps{ConfirmSends: tc.mode}}
		c, err := h.confirmation(ctx, mcp.CallToolRequest{}, tc.draft)
		if c != nil || (err != nil) != tc.refused || tc.refused && refusal.KindOf(err) != kindConfirmUnavailable {
			t.Errorf("%s (draft %v): %v %v, want refused %v", tc.mode, tc.draft, c, err, tc.refused)
		}
	}
}
