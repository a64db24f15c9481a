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

// StatsSnapshot is the JSON of GET /_emulator/stats.
type StatsSnapshot struct {
	Requests        int64                `json:"requests"`
	Downloads       int64                `json:"downloads"`
	BytesServed     int64                `json:"bytes_served"`
	RangeReads      int64                `json:"range_reads"`
	RangeBytes      int64                `json:"range_bytes"`
	UploadsStarted  int64                `json:"uploads_started"`
	UploadsFinished int64                `json:"uploads_finished"`
	MessagesSent    int64                `json:"messages_sent"`
	DraftsCreated   int64                `json:"drafts_created"`
	Files           map[string]FileStats `json:"files"`
	Paths           map[string]int64     `json:"paths"`
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
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s = StatsSnapshot{Files: map[string]FileStats{}, Paths: map[string]int64{}}
}

// Snapshot returns a copy of the counters.
func (st *Stats) Snapshot() StatsSnapshot {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := st.s
	s.Files = maps.Clone(st.s.Files)
	s.Paths = maps.Clone(st.s.Paths)
	return s
}

// Request counts one request to a route pattern (for example "GET /drive/v3/files/{id}").
func (st *Stats) Request(route string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Requests++
	st.s.Paths[route]++
}

// DownloadBegun counts a media or export response for fileID.
func (st *Stats) DownloadBegun(fileID string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Downloads++
	f := st.s.Files[fileID]
	f.Downloads++
	st.s.Files[fileID] = f
}

// Served counts n body bytes sent for fileID.
func (st *Stats) Served(fileID string, n int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.BytesServed += n
	f := st.s.Files[fileID]
	f.BytesServed += n
	st.s.Files[fileID] = f
}

// RangeReadBegun counts a partial (206) media response for fileID.
func (st *Stats) RangeReadBegun(fileID string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.RangeReads++
	f := st.s.Files[fileID]
	f.RangeReads++
	st.s.Files[fileID] = f
}

// RangeServed counts n body bytes of a partial response for fileID.
func (st *Stats) RangeServed(fileID string, n int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.RangeBytes += n
	f := st.s.Files[fileID]
	f.RangeBytes += n
	st.s.Files[fileID] = f
}

// UploadStarted counts a media upload begun (multipart, or a resumable session opened).
func (st *Stats) UploadStarted() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.UploadsStarted++
}

// UploadFinished counts a media upload completed.
func (st *Stats) UploadFinished() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.UploadsFinished++
}

// MessageSent counts a Gmail message sent.
func (st *Stats) MessageSent() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.MessagesSent++
}

// DraftCreated counts a Gmail draft created.
func (st *Stats) DraftCreated() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.DraftsCreated++
}
