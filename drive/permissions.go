package drive

import (
	"context"
	"time"

	gdrive "google.golang.org/api/drive/v3"
)

// Permission is one way into a file: Drive's Permission resource, as much
// of it as says who it lets in.
type Permission struct {
	ID   string
	Type string // user, group, domain or anyone
	Role string // owner, organizer, fileOrganizer, writer, commenter or reader
	// EmailAddress is a user's or group's address; Domain a domain
	// permission's domain.
	EmailAddress string
	Domain       string
	// Expires is when a user's or group's access ends; zero for never.
	Expires time.Time
	// Deleted says the permission's account was deleted.
	Deleted bool
	// View is set on a permission that belongs to a view ("published",
	// "metadata") rather than to the file itself.
	View string
}

// Sharing is a file's permissions as Permissions read them.
type Sharing struct {
	Permissions []Permission
	// Complete says the list was read to its end; false when it was
	// longer than the pages Permissions was allowed to read.
	Complete bool
}

// PermissionPageSize is the most permissions.list answers per page
// (drive/v3 discovery, pageSize: 1 to 100).
const PermissionPageSize = 100

// permissionFields is what drivemail reads of each permission: who it
// reaches and whether it still does.
const permissionFields = "nextPageToken,permissions(id,type,role,emailAddress,domain,expirationTime,deleted,view)"

// Permissions lists f's permissions (permissions.list), reading at most
// maxPages pages of PermissionPageSize. Drive shows them only to a user
// who may share the file (File.CanShare): anyone else gets
// ErrFilePermission (403 insufficientFilePermissions).
func (c *Client) Permissions(ctx context.Context, f File, maxPages int) (Sharing, error) {
	const op = "permissions.list"
	var out Sharing
	token := ""
	for range maxPages {
		call := c.perms.List(f.ID).SupportsAllDrives(true).PageSize(PermissionPageSize).Fields(permissionFields).Context(ctx)
		if token != "" {
			call.PageToken(token)
		}
		setResourceKey(call.Header(), f.ID, f.ResourceKey)
		page, err := call.Do()
		if err != nil {
			return Sharing{}, c.wrap(op, err)
		}
		for _, p := range page.Permissions {
			if p != nil {
				out.Permissions = append(out.Permissions, permissionFromAPI(p))
			}
		}
		if token = page.NextPageToken; token == "" {
			out.Complete = true
			return out, nil
		}
	}
	return out, nil
}

func permissionFromAPI(p *gdrive.Permission) Permission {
	out := Permission{ID: p.Id, Type: p.Type, Role: p.Role, EmailAddress: p.EmailAddress, Domain: p.Domain, Deleted: p.Deleted, View: p.View}
	if p.ExpirationTime != "" {
		if t, err := time.Parse(time.RFC3339Nano, p.ExpirationTime); err == nil {
			out.Expires = t
		}
	}
	return out
}

// Share gives the user email role on f (permissions.create, type user)
// without Google's notification email: the message that carries the
// link is the notice. It needs the drive scope, or drive.file on a file
// drivemail created or the user opened with it. Drive refuses an address
// with no Google account, as it cannot share with one without emailing
// an invitation, and a change the file's or the organization's settings
// forbid: both are ErrSharingRefused (400 invalidSharingRequest).
func (c *Client) Share(ctx context.Context, f File, email, role string) error {
	const op = "permissions.create"
	call := c.perms.Create(f.ID, &gdrive.Permission{Type: "user", Role: role, EmailAddress: email}).
		SupportsAllDrives(true).SendNotificationEmail(false).Fields("id").Context(ctx)
	setResourceKey(call.Header(), f.ID, f.ResourceKey)
	if _, err := call.Do(); err != nil {
		return c.wrap(op, err)
	}
	return nil
}
