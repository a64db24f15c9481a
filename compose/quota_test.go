package compose_test

import (
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/gmailsvc"
	"github.com/drivemail/drivemail/handle"
	"github.com/drivemail/drivemail/internal/logtest"
)

// TestGmailLimitsSayTheTruth: each of Gmail's limits gets its own
// sentence and kind. The daily sending limit says when Gmail takes mail
// again and is not retried (the 600 KB attachment goes in 256 KiB
// resumable chunks, whose 429 the Google client used to retry for the 4
// minutes of its chunk retry deadline); the project's limits are logged
// for the operator at WARN. Nothing is sent.
func TestGmailLimitsSayTheTruth(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fault    gmailsvc.QuotaFault
		kind     string
		says     []string
		operator bool
	}{
		{"sending limit", gmailsvc.QuotaFault{Kind: gmailsvc.SendingLimit, User: user, For: gmailsvc.Duration(5 * time.Hour)}, "gmail_sending_limit",
			[]string{"reached its daily sending limit", "Nothing was sent.", "UTC (in about 5 hours); trying sooner does not help"}, false},
		{"per-user rate limit", gmailsvc.QuotaFault{Kind: gmailsvc.UserRateLimit, Status: 403}, "gmail_user_rate_limit",
			[]string{"this account can make per minute", "Nothing was sent.", "Try again in a minute."}, false},
		{"per-user rate limit, legacy body", gmailsvc.QuotaFault{Kind: gmailsvc.UserRateLimit, Status: 403, Legacy: true}, "gmail_user_rate_limit",
			[]string{"this account can make per minute", "Try again in a minute."}, false},
		{"per-project rate limit", gmailsvc.QuotaFault{Kind: gmailsvc.ProjectRateLimit, Status: 403}, "gmail_project_rate_limit",
			[]string{"for all its users together", "Try again in a minute", "higher quota"}, true},
		{"daily project quota", gmailsvc.QuotaFault{Kind: gmailsvc.DailyLimit}, "gmail_daily_quota",
			[]string{"daily Gmail quota", "midnight Pacific time", "whoever runs drivemail"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &logtest.Buffer{}
			e := newEnv(t, compose.Config{Logger: slog.New(slog.NewTextHandler(logs, nil))}, account.Options{GmailChunkSize: 256 << 10})
			until := time.Now().Add(5 * time.Hour)
			if err := e.Emu.Gmail().AddQuotaFault(tc.fault); err != nil {
				t.Fatal(err)
			}
			f, _ := e.putBytes("report.pdf", 600_000)
			before := e.Emu.Stats()
			start := time.Now()
			_, err := e.send(compose.Request{To: []string{"zoe@example.org"}, Subject: "Q3", BodyText: "hi",
				Attachments: []compose.Attachment{{Source: compose.DriveFile{Handle: handle.MustParse(f.ID)}}}}, compose.Options{})
			if !isRefusal(err) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			for _, want := range tc.says {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q does not say %q", err, want)
				}
			}
			if tc.fault.Kind == gmailsvc.SendingLimit {
				m := regexp.MustCompile(`again after (\d{4}-\d\d-\d\d \d\d:\d\d) UTC`).FindStringSubmatch(err.Error())
				if len(m) != 2 {
					m = []string{"", "none"}
				}
				if at, perr := time.Parse("2006-01-02 15:04", m[1]); perr != nil || at.Sub(until).Abs() > time.Minute {
					t.Errorf("refusal %q does not name the end of the limit, about %s", err, until.UTC().Format(time.RFC3339))
				}
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("the send took %v: Gmail's answer was retried", took)
			}
			outboxUnchanged(t, before, e.Emu.Stats())
			line := logs.String()
			if !regexp.MustCompile(`(?m) refusal=` + tc.kind + `( |$)`).MatchString(line) {
				t.Errorf("log does not name the kind %s:\n%s", tc.kind, line)
			}
			if warned := strings.Contains(line, "level=WARN") && strings.Contains(line, "operator="); warned != tc.operator {
				t.Errorf("operator warning logged: %v, want %v:\n%s", warned, tc.operator, line)
			}
			if strings.Contains(line, "Mail sending") || strings.Contains(line, "project_number") {
				t.Errorf("the log carries Google's error text:\n%s", line)
			}
		})
	}
}
