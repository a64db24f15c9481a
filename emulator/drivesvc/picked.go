package drivesvc

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// PickOptions narrow what a Picker shows: a user's files in My Drive and
// shared with them, never the trash.
type PickOptions struct {
	// MimeTypes, when set, are the only types shown (folders aside).
	MimeTypes []string
	// Folders shows folders too.
	Folders bool
	// SharedDrives shows the shared drives' files too (Feature.SUPPORT_DRIVES).
	SharedDrives bool
	// MineOnly shows only files the user owns (Feature.MINE_ONLY).
	MineOnly bool
}

// Pickable lists, by name, the files email could pick in Google's Picker:
// what the user (not an app) sees. The Picker shows every file of the
// user's, whatever scope the app's token has.
func (s *Service) Pickable(email string, o PickOptions) []File {
	c := caller{email: strings.ToLower(email), allDrives: o.SharedDrives}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []File
	for _, f := range s.files {
		if f.isRoot || f.trashed || f.kind == KindShortcut || !s.pickable(c, f, o) {
			continue
		}
		out = append(out, s.publicFile(f))
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Name < out[j].Name || out[i].Name == out[j].Name && out[i].ID < out[j].ID
	})
	return out
}

// pickable reports whether c sees f in a Picker of options o. The caller holds s.mu.
func (s *Service) pickable(c caller, f *file, o PickOptions) bool {
	inCorpus := s.inUserCorpus(c, f) || o.SharedDrives && s.inDriveCorpus(c, f, "")
	switch {
	case !inCorpus, o.MineOnly && f.owner != c.email:
		return false
	case f.kind == KindFolder:
		return o.Folders
	}
	return len(o.MimeTypes) == 0 || slices.Contains(o.MimeTypes, f.mimeType)
}

// Grant records that email picked the files ids in a Picker of clientID's
// app: drive.file then reaches them for that client, as Google's
// "opened with the app" does. Every id must be a file the user sees (as
// Pickable lists them, shared drives included); nothing is granted
// otherwise. It returns the files, in the order asked.
func (s *Service) Grant(email, clientID string, ids []string) ([]File, error) {
	if clientID == "" {
		return nil, fmt.Errorf("grant: no OAuth client to grant to")
	}
	c := caller{email: strings.ToLower(email), allDrives: true}
	s.mu.Lock()
	defer s.mu.Unlock()
	picked := make([]*file, 0, len(ids))
	for _, id := range ids {
		f := s.files[id]
		if f == nil || f.isRoot || f.trashed || !s.pickable(c, f, PickOptions{Folders: true, SharedDrives: true}) {
			return nil, fmt.Errorf("grant: %w", errFileNotFound(id))
		}
		picked = append(picked, f)
	}
	out := make([]File, 0, len(picked))
	for _, f := range picked {
		if !slices.Contains(f.openedWith, clientID) {
			f.openedWith = append(f.openedWith, clientID)
		}
		out = append(out, s.publicFile(f))
	}
	return out, nil
}

// WebViewLink is where a person opens f on the emulator at origin, as
// its webViewLink says.
func WebViewLink(origin string, f File) string {
	return webViewLink(origin, &file{id: f.ID, kind: f.Kind, resourceKey: f.ResourceKey})
}
