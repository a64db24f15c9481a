package core

import (
	"maps"
	"sync"
)

// FileStats counts what was served of one Drive file.
// Downloads and BytesServed count whole responses (200); a partial answer
// to a Range request (206) counts under RangeReads and RangeBytes instead,
// so a test can tell "read a zip's directory" from "downloaded the file".
type FileStats struct {
	Downloads   int64 `json:"downloads"`
	BytesServed int64 `json:"bytes_served"`
	RangeReads  int64 `json:"range_reads"`
	RangeBytes  int64 `json:"range_bytes"`
}

// StatsSnapshot is the JSON of GET /_emulator/stats. Its downloads,
// bytes_served, range_reads and range_bytes sum those of every file.
type StatsSnapshot struct {
	Requests int64 `json:"requests"`
	FileStats
	UploadsStarted  int64 `json:"uploads_started"`
	UploadsFinished int64 `json:"uploads_finished"`
	MessagesSent    int64 `json:"messages_sent"`
	DraftsCreated   int64 `json:"drafts_created"`
	// PermissionsCreated counts Drive permissions.create calls that
	// shared a file; PicksGranted counts files granted through the
	// Picker. A test sees that a share or a pick happened.
	PermissionsCreated int64 `json:"permissions_created"`
	PicksGranted       int64 `json:"picks_granted"`
	// TokensRevoked counts tokens revoked at POST /revoke, per account
	// email: a test sees that a grant was ended at Google.
	TokensRevoked map[string]int64     `json:"tokens_revoked"`
	Files         map[string]FileStats `json:"files"`
	Paths         map[string]int64     `json:"paths"`
}

// Stats are the emulator's counters. Safe for concurrent use.
type Stats struct {
	mu sync.Mutex
	s  StatsSnapshot
}

// NewStats returns zeroed counters.
func NewStats() *Stats {
	st := &Stats{}
	st.Reset()
	return st
}

// Reset zeroes every counter.
func (st *Stats) Reset() {
	st.count(func(s *StatsSnapshot) {
		*s = StatsSnapshot{Files: map[string]FileStats{}, Paths: map[string]int64{}, TokensRevoked: map[string]int64{}}
	})
}

// Snapshot returns a copy of the counters.
func (st *Stats) Snapshot() StatsSnapshot {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.s
	s.Files = maps.Clone(st.s.Files)
	s.Paths = maps.Clone(st.s.Paths)
	s.TokensRevoked = maps.Clone(st.s.TokensRevoked)
	return s
}

// count applies change to the counters under the lock.
func (st *Stats) count(change func(*StatsSnapshot)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	change(&st.s)
}

// countFile applies change to fileID's counters and to the totals.
func (st *Stats) countFile(fileID string, change func(*FileStats)) {
	st.count(func(s *StatsSnapshot) {
		change(&s.FileStats)
		f := s.Files[fileID]
		change(&f)
		s.Files[fileID] = f
	})
}

// Request counts one request to a route pattern (for example "GET /drive/v3/files/{id}").
func (st *Stats) Request(route string) {
	st.count(func(s *StatsSnapshot) { s.Requests++; s.Paths[route]++ })
}

// DownloadBegun counts a media or export response for fileID.
func (st *Stats) DownloadBegun(fileID string) {
	st.countFile(fileID, func(f *FileStats) { f.Downloads++ })
}

// Served counts n body bytes sent for fileID.
func (st *Stats) Served(fileID string, n int64) {
	st.countFile(fileID, func(f *FileStats) { f.BytesServed += n })
}

// RangeReadBegun counts a partial (206) media response for fileID.
func (st *Stats) RangeReadBegun(fileID string) {
	st.countFile(fileID, func(f *FileStats) { f.RangeReads++ })
}

// RangeServed counts n body bytes of a partial response for fileID.
func (st *Stats) RangeServed(fileID string, n int64) {
	st.countFile(fileID, func(f *FileStats) { f.RangeBytes += n })
}

// UploadStarted counts a media upload begun (multipart, or a resumable session opened).
func (st *Stats) UploadStarted() { st.count(func(s *StatsSnapshot) { s.UploadsStarted++ }) }

// UploadFinished counts a media upload completed.
func (st *Stats) UploadFinished() { st.count(func(s *StatsSnapshot) { s.UploadsFinished++ }) }

// MessageSent counts a Gmail message sent.
func (st *Stats) MessageSent() { st.count(func(s *StatsSnapshot) { s.MessagesSent++ }) }

// TokenRevoked counts a token of email revoked at the revocation endpoint.
func (st *Stats) TokenRevoked(email string) {
	st.count(func(s *StatsSnapshot) { s.TokensRevoked[email]++ })
}

// DraftCreated counts a Gmail draft created.
func (st *Stats) DraftCreated() { st.count(func(s *StatsSnapshot) { s.DraftsCreated++ }) }

// PermissionCreated counts a Drive permission created.
func (st *Stats) PermissionCreated() { st.count(func(s *StatsSnapshot) { s.PermissionsCreated++ }) }

// PickGranted counts n files granted to an app through the Picker.
func (st *Stats) PickGranted(n int) { st.count(func(s *StatsSnapshot) { s.PicksGranted += int64(n) }) }
