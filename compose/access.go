package compose

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/mimemsg"
)

// Links that open. A file that goes as a link is only worth sending if
// its recipients can open it. Gmail's compose checks them against the
// file's sharing as it sends and offers to share it
// (support.google.com/mail/answer/2487407); drivemail does the same,
// after the plan and before anything is downloaded or sent, with one
// bounded permissions.list per linked file. A recipient can open the link
// when the file is shared with anyone who has it, with the recipient's
// domain, or with their address (or a group whose address they wrote);
// any other group may hold them, which drivemail cannot see (that needs
// the group's members, which the Drive API does not give), so they
// count as "may not". Permissions that expired, whose account was
// deleted, or that belong to a view do not count.

// Sharing limits.
const (
	// MaxPermissionPages bounds the permissions.list pages read for one
	// linked file, drive.PermissionPageSize each: 400 permissions. A
	// recipient not found in a longer list is not known either way.
	MaxPermissionPages = 4
	// MaxShareGrants bounds the permissions one message's share options
	// add: the recipients lacking access, summed over the linked files.
	// Each is a permissions.create, one after another (Drive applies only
	// the last of concurrent changes to one file's permissions).
	MaxShareGrants = 50
)

// ShareRoles are the roles a share option may give: enough to open the
// link (and comment). Edit rights are the owner's to give, in Drive.
var ShareRoles = []string{"reader", "commenter"}

// verdict is whether one recipient can open one file's link.
type verdict uint8

const (
	opens   verdict = iota + 1
	mayNot          // only a group might let them in
	cannot          // nothing in the file's sharing reaches them
	unknown         // not in the part of a long list that was read
)

// linkAccess is what drivemail knows of who can open one linked file.
type linkAccess struct {
	// unchecked says why the sharing could not be read; "" when it was.
	unchecked string
	// lacking are the recipients who cannot (or may not) open it, in the
	// message's order; mayNot those only a group might let in.
	lacking []string
	mayNot  map[string]bool
	// unknown are recipients a list too long to read whole did not name.
	unknown []string
	// granted are the recipients drivemail gave the share option's role.
	granted []string
}

// Why drivemail could not read a file's sharing.
const (
	whyCannotShare = "the user may not change this file's sharing, so Google Drive does not show them who can open it"
)

// whyTooLong is the note for a sharing list past MaxPermissionPages.
func whyTooLong() string {
	return fmt.Sprintf("the file is shared with more than the %d people and groups drivemail reads", MaxPermissionPages*drive.PermissionPageSize)
}

// linkedFiles are the Drive files that go as links.
func linkedFiles(mp *msgPlan) []*item {
	var out []*item
	for _, it := range mp.items {
		if it.isDrive() && it.plan.action == actLink {
			out = append(out, it)
		}
	}
	return out
}

// recipients are the message's To, Cc and Bcc addresses, bare, each once.
// validate has checked them, so they parse.
func recipients(req Request) []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]string{req.To, req.Cc, req.Bcc} {
		addrs, err := mimemsg.ParseAddresses("to", list)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if k := canonical(a.Address); !seen[k] {
				seen[k] = true
				out = append(out, a.Address)
			}
		}
	}
	return out
}

// canonical is an address as Google compares accounts: case aside, and
// for Gmail's own domains dots aside in the name ("Dots don't matter in
// Gmail addresses", support.google.com/mail/answer/7436150), googlemail.com
// being gmail.com.
func canonical(addr string) string {
	a := strings.ToLower(strings.TrimSpace(addr))
	at := strings.LastIndexByte(a, '@')
	if at < 0 {
		return a
	}
	local, domain := a[:at], canonicalDomain(a[at+1:])
	if domain == "gmail.com" {
		local = strings.ReplaceAll(local, ".", "")
	}
	return local + "@" + domain
}

// canonicalDomain is a domain as Google compares it.
func canonicalDomain(d string) string {
	d = strings.ToLower(strings.TrimSpace(d))
	if d == "googlemail.com" {
		return "gmail.com"
	}
	return d
}

// reach says whether addr can open a file shared as perms at now.
func reach(perms []drive.Permission, addr string, now time.Time) verdict {
	want := canonical(addr)
	domain := want[strings.LastIndexByte(want, '@')+1:]
	group := false
	for _, p := range perms {
		if p.View != "" || p.Deleted || !p.Expires.IsZero() && !now.Before(p.Expires) {
			continue
		}
		switch p.Type {
		case "anyone":
			return opens
		case "domain":
			if canonicalDomain(p.Domain) == domain {
				return opens
			}
		case "user":
			if canonical(p.EmailAddress) == want {
				return opens
			}
		case "group":
			if canonical(p.EmailAddress) == want {
				return opens // the group's own address: its members get the mail
			}
			group = true
		}
	}
	if group {
		return mayNot
	}
	return cannot
}

// judge fills it.access from the sharing read for it.
func judge(it *item, s drive.Sharing, rcpts []string, now time.Time) {
	a := it.access
	for _, r := range rcpts {
		v := reach(s.Permissions, r, now)
		if !s.Complete && v != opens {
			v = unknown
		}
		switch v {
		case mayNot:
			a.mayNot[r] = true
			a.lacking = append(a.lacking, r)
		case cannot:
			a.lacking = append(a.lacking, r)
		case unknown:
			a.unknown = append(a.unknown, r)
		}
	}
}

// checkLinks reads the sharing of every file that goes as a link and
// refuses what the recipients could not open, unless its share option
// will give them access (shareLinks, just before the stream). A file
// whose sharing the user may not see goes unchecked, and the result says
// so. It also refuses a share option that cannot be carried out, and
// more grants than MaxShareGrants, so that nothing is shared for a
// message that then cannot go.
func checkLinks(ctx context.Context, d driveAPI, acct *account.Account, req Request, mp *msgPlan, draft bool, now time.Time) error {
	links := linkedFiles(mp)
	if len(links) == 0 {
		return nil
	}
	rcpts := recipients(req)
	sharing, err := readSharing(ctx, d, links, draft)
	if err != nil {
		return err
	}
	for i, it := range links {
		it.access = &linkAccess{mayNot: map[string]bool{}}
		if sharing[i] == nil {
			it.access.unchecked = whyCannotShare
			continue
		}
		judge(it, *sharing[i], rcpts, now)
		if len(it.access.unknown) > 0 {
			it.access.unchecked = whyTooLong()
		}
	}
	return decideLinks(acct, links, draft)
}

// readSharing lists each linked file's permissions, concurrently (at most
// metadataWorkers at a time); nil for a file whose sharing the user may
// not see (Drive's canShare false, or its 403).
func readSharing(ctx context.Context, d driveAPI, links []*item, draft bool) ([]*drive.Sharing, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]*drive.Sharing, len(links))
	errs := make([]error, len(links))
	sem := make(chan struct{}, metadataWorkers)
	var wg sync.WaitGroup
	for i, it := range links {
		if !it.file.CanShare {
			continue // Drive would answer 403: spare the call
		}
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			s, err := withRetry(ctx, func() (drive.Sharing, error) { return d.Permissions(ctx, it.file) })
			switch {
			case err == nil:
				out[i] = &s
			case errors.Is(err, drive.ErrForbidden), errors.Is(err, drive.ErrScope), errors.Is(err, drive.ErrNotFound):
				// The user may see the file but not its sharing.
			default:
				errs[i] = lookupError(it, err, draft)
				cancel()
			}
		})
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled) && !errors.Is(err, context.Canceled)) {
			first = err
		}
	}
	return out, first
}

// linked is a link's entry in the result.
func (it *item) linked() Linked {
	l := Linked{FileID: it.ref.ID, Name: it.plan.name, URL: it.plan.url, Access: AccessOpen}
	a := it.access
	if a == nil {
		return l
	}
	if a.unchecked != "" {
		l.Access, l.AccessNote = AccessUnchecked, "drivemail could not check that the recipients can open it: "+a.unchecked+"."
	}
	if len(a.granted) > 0 {
		l.SharedWith, l.SharedRole = a.granted, it.opts.Share
	}
	return l
}
