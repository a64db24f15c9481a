package drivesvc

import (
	"fmt"
	"net/mail"
	"slices"
	"strings"
)

// Permission is one way to reach a file, as FileSpec.Permissions takes it
// and Service.Permissions reports it: Drive's Permission resource (type,
// role, emailAddress or domain, allowFileDiscovery). The owner's and a
// shared drive's members' come from the file's place, not from here.
type Permission struct {
	ID   string
	Type string // user, group, domain or anyone
	Role string // writer, commenter or reader (organizer, fileOrganizer in shared drives)
	// EmailAddress is a user's or group's address.
	EmailAddress string
	// Domain is a domain permission's domain.
	Domain string
	// AllowFileDiscovery makes a domain or anyone permission searchable
	// instead of link-only.
	AllowFileDiscovery bool
}

// permission is a Permission as a file keeps it.
type permission = Permission

// Drive's permission types and roles (drive/v3 discovery, Permission).
var (
	permissionTypes = []string{"user", "group", "domain", "anyone"}
	// roleRank orders the roles by what they allow.
	roleRank = map[string]int{"reader": 1, "commenter": 2, "writer": 3, "fileOrganizer": 4, "organizer": 5, "owner": 6}
)

// permissionOf checks p as a file's permission and gives it its id.
// Stable ids, as Google's: a user's is their permissionId, "anyoneWithLink"
// or "anyone" for link sharing, a digest of the domain for a domain.
func permissionOf(p Permission) (permission, error) {
	p.Type, p.Role = strings.TrimSpace(p.Type), strings.TrimSpace(p.Role)
	p.EmailAddress, p.Domain = strings.ToLower(strings.TrimSpace(p.EmailAddress)), strings.ToLower(strings.TrimSpace(p.Domain))
	if !slices.Contains(permissionTypes, p.Type) {
		return p, fmt.Errorf("permission type %q: want user, group, domain or anyone", p.Type)
	}
	if _, ok := roleRank[p.Role]; !ok || p.Role == "owner" {
		return p, fmt.Errorf("permission role %q: want reader, commenter, writer, fileOrganizer or organizer (the owner is the file's)", p.Role)
	}
	switch p.Type {
	case "user", "group":
		if a, err := mail.ParseAddress(p.EmailAddress); err != nil || a.Address != p.EmailAddress || p.Domain != "" || p.AllowFileDiscovery {
			return p, fmt.Errorf("a %s permission takes an email address only, not %q", p.Type, p.EmailAddress)
		}
		p.ID = permissionID(p.EmailAddress)
	case "domain":
		if !validDomain(p.Domain) || p.EmailAddress != "" {
			return p, fmt.Errorf("a domain permission takes a domain only, not %q", p.Domain)
		}
		p.ID = permissionID("domain:"+p.Domain) + "k"
	case "anyone":
		if p.EmailAddress != "" || p.Domain != "" {
			return p, fmt.Errorf("an anyone permission takes no address or domain")
		}
		p.ID = "anyoneWithLink"
		if p.AllowFileDiscovery {
			p.ID = "anyone"
		}
	}
	return p, nil
}

// validDomain reports whether d looks like a DNS name with a dot.
func validDomain(d string) bool {
	if len(d) > 253 || !strings.Contains(d, ".") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, ".") {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// grant adds p to f, replacing a permission of the same id (a new role
// for the same user, as Google keeps one permission per grantee). The
// caller holds s.mu for writing, or owns f.
func (f *file) grant(p permission) {
	for i, old := range f.perms {
		if old.ID == p.ID {
			f.perms[i] = p
			return
		}
	}
	f.perms = append(f.perms, p)
}

// sharedWithUser reports whether f has a user permission for email.
func (f *file) sharedWithUser(email string) bool {
	for _, p := range f.perms {
		if p.Type == "user" && p.EmailAddress == email {
			return true
		}
	}
	return false
}

// linkReaches reports whether someone with f's link who is email reaches
// it: an anyone permission, or a domain permission of email's domain.
func (f *file) linkReaches(email string) bool {
	_, domain, _ := strings.Cut(email, "@")
	for _, p := range f.perms {
		if p.Type == "anyone" || p.Type == "domain" && p.Domain == domain {
			return true
		}
	}
	return false
}

// shared reports whether f has any permission beyond its owner's.
func (f *file) shared() bool { return len(f.perms) > 0 }

// roleOf is the strongest role email holds on f through its own
// permissions (the owner and shared-drive members aside).
func (f *file) roleOf(email string) string {
	_, domain, _ := strings.Cut(email, "@")
	best := ""
	for _, p := range f.perms {
		reaches := p.Type == "anyone" || p.Type == "user" && p.EmailAddress == email || p.Type == "domain" && p.Domain == domain
		if reaches && roleRank[p.Role] > roleRank[best] {
			best = p.Role
		}
	}
	return best
}

// canShare reports whether c may see and change f's sharing: its owner,
// a member of its shared drive, or a writer (Drive's writersCanShare is
// true on every emulated file). The caller holds s.mu.
func (s *Service) canShare(c caller, f *file) bool {
	if f.owner == c.email {
		return true
	}
	if d := s.drives[f.driveID]; d != nil && d.members[c.email] {
		return true
	}
	return roleRank[f.roleOf(c.email)] >= roleRank["writer"]
}

// Permissions reports a file's permissions whoever owns it, the owner's
// (or a shared drive's members') first, as permissions.list answers.
func (s *Service) Permissions(id string) ([]Permission, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f := s.files[id]
	if f == nil || f.isRoot {
		return nil, false
	}
	return s.allPermissions(f), true
}

// allPermissions is f's whole list: the owner (or each member of its
// shared drive, as an organizer) and then its own. The caller holds s.mu.
func (s *Service) allPermissions(f *file) []Permission {
	var out []Permission
	if f.owner != "" {
		out = append(out, Permission{ID: permissionID(f.owner), Type: "user", Role: "owner", EmailAddress: f.owner})
	}
	if d := s.drives[f.driveID]; d != nil {
		members := make([]string, 0, len(d.members))
		for m := range d.members {
			members = append(members, m)
		}
		slices.Sort(members)
		for _, m := range members {
			out = append(out, Permission{ID: permissionID(m), Type: "user", Role: "organizer", EmailAddress: m})
		}
	}
	return append(out, f.perms...)
}

// permissionResource is p as Drive's Permission resource; in a shared
// drive it says whether it is the drive's (a member) or the file's own.
// The caller holds s.mu.
func (s *Service) permissionResource(f *file, p Permission) map[string]any {
	m := map[string]any{"kind": "drive#permission", "id": p.ID, "type": p.Type, "role": p.Role, "deleted": false, "pendingOwner": false}
	switch p.Type {
	case "user", "group":
		m["emailAddress"] = p.EmailAddress
		m["displayName"] = displayName(p.EmailAddress)
	case "domain":
		m["domain"] = p.Domain
		m["displayName"] = p.Domain
		m["allowFileDiscovery"] = p.AllowFileDiscovery
	case "anyone":
		m["allowFileDiscovery"] = p.AllowFileDiscovery
	}
	if d := s.drives[f.driveID]; d != nil {
		kind, inherited := "file", false
		if p.Role == "organizer" && d.members[p.EmailAddress] && !slices.ContainsFunc(f.perms, func(q permission) bool { return q.ID == p.ID }) {
			kind, inherited = "member", true
		}
		detail := map[string]any{"permissionType": kind, "role": p.Role, "inherited": inherited}
		if inherited {
			detail["inheritedFrom"] = d.id
		}
		m["permissionDetails"] = []map[string]any{detail}
	}
	return m
}
