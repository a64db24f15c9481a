package compose

import (
	"strings"
	"testing"

	"github.com/drivemail/drivemail/blocked"
)

// TestBlockedAdviceForEverySource: every source has a sentence for every
// finding, and only a source that has a link to send, or can get one,
// says to send a link: the advice must be possible for that input.
func TestBlockedAdviceForEverySource(t *testing.T) {
	findings := []*blocked.Finding{
		{Reason: blocked.ReasonExtension, File: "a.exe"},
		{Reason: blocked.ReasonExtension, File: "a.zip", Entry: "b.exe"},
		{Reason: blocked.ReasonEncrypted, File: "a.zip"},
		{Reason: blocked.ReasonTooLarge, File: "a.zip"},
		{Reason: blocked.ReasonUnreadable, File: "a.zip"},
		{Reason: blocked.ReasonContent, File: "a.pdf", Detail: "a Windows program (an .exe or .dll)"},
		{Reason: blocked.ReasonContent, File: "a.zip", Entry: "b.pdf", Detail: "a Windows program (an .exe or .dll)"},
	}
	for _, tt := range []struct {
		source Source
		link   bool // may advise a link
	}{
		{DriveFile{}, true},
		{GmailAttachment{}, true},
		{Content{}, false},
		{ClientFile{}, false},
	} {
		it := &item{index: 1, att: Attachment{Name: "a.exe", Source: tt.source}}
		for _, f := range findings {
			advice := blockedAdvice(it, f)
			switch {
			case advice == "":
				t.Errorf("%T, reason %d %q: no advice", tt.source, f.Reason, f.Entry)
			case !tt.link && strings.Contains(advice, "link"):
				t.Errorf("%T, reason %d %q: %q advises a link the source does not have", tt.source, f.Reason, f.Entry, advice)
			}
		}
	}
}
