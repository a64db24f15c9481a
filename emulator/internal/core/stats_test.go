package core

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestStatsCountPerFileAndInAll(t *testing.T) {
	st := NewStats()
	st.Request("GET /drive/v3/files/{fileId}")
	st.Request("GET /drive/v3/files/{fileId}")
	st.DownloadBegun("a")
	st.Served("a", 100)
	st.Served("a", 5)
	st.DownloadBegun("b")
	st.Served("b", 7)
	st.RangeReadBegun("a")
	st.RangeServed("a", 64)
	st.UploadStarted()
	st.UploadFinished()
	st.MessageSent()
	st.DraftCreated()
	st.DraftCreated()
	st.TokenRevoked("a@example.com")

	got := st.Snapshot()
	want := StatsSnapshot{
		Requests:        2,
		FileStats:       FileStats{Downloads: 2, BytesServed: 112, RangeReads: 1, RangeBytes: 64},
		UploadsStarted:  1,
		UploadsFinished: 1,
		MessagesSent:    1,
		DraftsCreated:   2,
		Files: map[string]FileStats{
			"a": {Downloads: 1, BytesServed: 105, RangeReads: 1, RangeBytes: 64},
			"b": {Downloads: 1, BytesServed: 7},
		},
		Paths:         map[string]int64{"GET /drive/v3/files/{fileId}": 2},
		TokensRevoked: map[string]int64{"a@example.com": 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot\n%+v\nwant\n%+v", got, want)
	}

	// The JSON keeps the totals at the top, beside requests.
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]float64{"requests": 2, "downloads": 2, "bytes_served": 112, "range_reads": 1, "range_bytes": 64, "drafts_created": 2} {
		if top[k] != v {
			t.Errorf("JSON %s = %v, want %v (in %s)", k, top[k], v, b)
		}
	}
	if _, nested := top["FileStats"]; nested {
		t.Errorf("totals nested in the JSON: %s", b)
	}

	// A snapshot is a copy; Reset zeroes the counters.
	got.Files["a"] = FileStats{}
	got.Paths["x"] = 1
	if again := st.Snapshot(); again.Files["a"].BytesServed != 105 || len(again.Paths) != 1 {
		t.Errorf("changing a snapshot changed the counters: %+v", again)
	}
	st.Reset()
	if again := st.Snapshot(); again.Downloads != 0 || again.Requests != 0 || len(again.Files) != 0 || len(again.Paths) != 0 {
		t.Errorf("after Reset: %+v", again)
	}
	st.Served("c", 1)
	if s := st.Snapshot(); s.BytesServed != 1 || s.Files["c"].BytesServed != 1 {
		t.Errorf("counting after Reset: %+v", s)
	}
}
