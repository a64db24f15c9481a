package compose

import (
	"testing"
	"time"

	"github.com/drivemail/drivemail/drive"
)

// TestReach: who can open a link, from the file's permissions alone, as
// Gmail's own check decides it: anyone with the link, the recipient's
// domain, their address (case and Gmail's dots aside), a group's own
// address; another group only "may"; expired, deleted and view
// permissions let nobody in.
func TestReach(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	owner := drive.Permission{Type: "user", Role: "owner", EmailAddress: "ana@example.com"}
	tests := []struct {
		name  string
		perms []drive.Permission
		addr  string
		want  verdict
	}{
		{"the owner", []drive.Permission{owner}, "ana@example.com", opens},
		{"no one else", []drive.Permission{owner}, "bob@other.org", cannot},
		{"anyone with the link", []drive.Permission{owner, {Type: "anyone", Role: "reader"}}, "bob@other.org", opens},
		{"the recipient's domain", []drive.Permission{owner, {Type: "domain", Role: "commenter", Domain: "Example.com"}}, "carol@EXAMPLE.com", opens},
		{"another domain", []drive.Permission{owner, {Type: "domain", Role: "reader", Domain: "example.com"}}, "bob@other.org", cannot},
		{"a subdomain is another domain", []drive.Permission{{Type: "domain", Role: "reader", Domain: "example.com"}}, "bob@eu.example.com", cannot},
		{"the address, case aside", []drive.Permission{owner, {Type: "user", Role: "writer", EmailAddress: "bob@other.org"}}, "Bob@Other.ORG", opens},
		{"Gmail's dots do not matter", []drive.Permission{{Type: "user", Role: "reader", EmailAddress: "bobsmith@gmail.com"}}, "Bob.Smith@googlemail.com", opens},
		{"other domains' dots do", []drive.Permission{{Type: "user", Role: "reader", EmailAddress: "bobsmith@other.org"}}, "bob.smith@other.org", cannot},
		{"a group's own address", []drive.Permission{{Type: "group", Role: "reader", EmailAddress: "team@other.org"}}, "team@other.org", opens},
		{"maybe in a group", []drive.Permission{owner, {Type: "group", Role: "reader", EmailAddress: "team@other.org"}}, "bob@other.org", mayNot},
		{"expired", []drive.Permission{{Type: "user", Role: "reader", EmailAddress: "bob@other.org", Expires: now}}, "bob@other.org", cannot},
		{"not yet expired", []drive.Permission{{Type: "user", Role: "reader", EmailAddress: "bob@other.org", Expires: now.Add(time.Second)}}, "bob@other.org", opens},
		{"an expired group", []drive.Permission{{Type: "group", Role: "reader", EmailAddress: "team@other.org", Expires: now.Add(-time.Hour)}}, "bob@other.org", cannot},
		{"a deleted account", []drive.Permission{{Type: "user", Role: "reader", EmailAddress: "bob@other.org", Deleted: true}}, "bob@other.org", cannot},
		{"a published view's", []drive.Permission{{Type: "anyone", Role: "reader", View: "published"}}, "bob@other.org", cannot},
	}
	for _, tt := range tests {
		if got := reach(tt.perms, tt.addr, now); got != tt.want {
			t.Errorf("%s: reach = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestJudgeAPartialList: in a list cut short, a recipient it names can
// open the link and one it does not is unknown, never "cannot".
func TestJudgeAPartialList(t *testing.T) {
	it := &item{access: &linkAccess{mayNot: map[string]bool{}}}
	s := drive.Sharing{Permissions: []drive.Permission{{Type: "user", Role: "reader", EmailAddress: "bob@other.org"}}}
	judge(it, s, []string{"bob@other.org", "carol@other.org"}, time.Now())
	if len(it.access.lacking) != 0 || len(it.access.unknown) != 1 || it.access.unknown[0] != "carol@other.org" {
		t.Errorf("partial list: lacking %v, unknown %v; want carol unknown only", it.access.lacking, it.access.unknown)
	}
	it = &item{access: &linkAccess{mayNot: map[string]bool{}}}
	s.Complete = true
	judge(it, s, []string{"bob@other.org", "carol@other.org"}, time.Now())
	if len(it.access.lacking) != 1 || len(it.access.unknown) != 0 {
		t.Errorf("whole list: lacking %v, unknown %v; want carol lacking", it.access.lacking, it.access.unknown)
	}
}

// TestRecipientsOnceEach: To, Cc and Bcc, bare, each address once.
func TestRecipientsOnceEach(t *testing.T) {
	got := recipients(Request{To: []string{"Bob <bob@other.org>"}, Cc: []string{"BOB@other.org", "carol@other.org"}, Bcc: []string{"d.an@gmail.com", "dan@gmail.com"}})
	want := []string{"bob@other.org", "carol@other.org", "d.an@gmail.com"}
	if len(got) != len(want) {
		t.Fatalf("recipients = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("recipients = %v, want %v", got, want)
		}
	}
}

// TestWithResourceKey: a link to a file with a resource key carries it,
// once.
func TestWithResourceKey(t *testing.T) {
	tests := []struct{ link, key, want string }{
		{"https://docs.google.com/document/d/X/edit", "", "https://docs.google.com/document/d/X/edit"},
		{"https://docs.google.com/document/d/X/edit?usp=drivesdk", "0-abc", "https://docs.google.com/document/d/X/edit?resourcekey=0-abc&usp=drivesdk"},
		{"https://docs.google.com/document/d/X/edit?usp=drivesdk&resourcekey=0-abc", "0-abc", "https://docs.google.com/document/d/X/edit?usp=drivesdk&resourcekey=0-abc"},
	}
	for _, tt := range tests {
		if got := withResourceKey(tt.link, tt.key); got != tt.want {
			t.Errorf("withResourceKey(%q, %q) = %q, want %q", tt.link, tt.key, got, tt.want)
		}
	}
}

// TestAddrList: five addresses by name, then how many more.
func TestAddrList(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{1, "a1@x.org"},
		{2, "a1@x.org and a2@x.org"},
		{5, "a1@x.org, a2@x.org, a3@x.org, a4@x.org and a5@x.org"},
		{6, "a1@x.org, a2@x.org, a3@x.org, a4@x.org, a5@x.org and 1 more"},
	}
	for _, tt := range tests {
		var addrs []string
		for i := range tt.n {
			addrs = append(addrs, "a"+string(rune('1'+i))+"@x.org")
		}
		if got := addrList(addrs); got != tt.want {
			t.Errorf("addrList(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
