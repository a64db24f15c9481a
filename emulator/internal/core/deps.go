package core

import (
	"net/http"
	"time"
)

// Deps is what the emulator hands every emulated service.
type Deps struct {
	Accounts *Accounts
	Blobs    *Blobs
	Stats    *Stats
	Now      func() time.Time
	// Uploads holds the resumable sessions an injected 4xx ended (nil: none).
	Uploads *EndedUploads
}

// Origin is the scheme and host the request reached, for the absolute URLs
// Google returns (resumable Location headers, exportLinks, webViewLink).
func Origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
