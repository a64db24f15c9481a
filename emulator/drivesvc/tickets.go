package drivesvc

import (
	"sync"
	"time"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// Bounds of export-link tickets: one-time content URLs, short-lived as
// Google's googleusercontent.com export URLs are.
const (
	linkTicketTTL = 5 * time.Minute
	maxLinkTicket = 10_000
)

// linkExport is what an export link's redirect target serves.
type linkExport struct {
	email, client string
	id, key       string // the file and the resource key the link carried
	param, gid    string
	host          string // the content host the ticket is valid on
	expires       time.Time
}

// linkTickets are the export-link redirect targets not yet used.
type linkTickets struct {
	mu sync.Mutex
	m  map[string]linkExport
}

// issue stores t under a new ticket, dropping expired ones (and, past the
// bound, refusing none: the oldest expire within linkTicketTTL).
func (l *linkTickets) issue(t linkExport, now time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]linkExport{}
	}
	if len(l.m) >= maxLinkTicket {
		for k, v := range l.m {
			if now.After(v.expires) {
				delete(l.m, k)
			}
		}
	}
	for len(l.m) >= maxLinkTicket {
		for k := range l.m {
			delete(l.m, k)
			break
		}
	}
	t.expires = now.Add(linkTicketTTL)
	id := core.RandomID(24)
	l.m[id] = t
	return id
}

// take uses a ticket up.
func (l *linkTickets) take(id string, now time.Time) (linkExport, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.m[id]
	delete(l.m, id)
	return t, ok && !now.After(t.expires)
}
