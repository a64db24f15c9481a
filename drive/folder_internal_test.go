package drive

import (
	"slices"
	"testing"

	gdrive "google.golang.org/api/drive/v3"
)

// TestOldestFirst is the rule every racing FolderInRoot caller applies to
// the same list: oldest createdTime first, ties by id, whatever order
// Drive answered in.
func TestOldestFirst(t *testing.T) {
	const (
		idA = "1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		idB = "1BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
		idC = "1CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"
	)
	f := func(id, created string) *gdrive.File { return &gdrive.File{Id: id, CreatedTime: created} }
	tests := []struct {
		name string
		in   []*gdrive.File
		want []string
	}{
		{"none", nil, []string{}},
		{"older first", []*gdrive.File{f(idA, "2026-01-02T00:00:00.001Z"), f(idB, "2026-01-02T00:00:00.000Z")}, []string{idB, idA}},
		{"same time: smaller id first", []*gdrive.File{f(idC, "2026-01-02T00:00:00.000Z"), f(idA, "2026-01-02T00:00:00.000Z")}, []string{idA, idC}},
		{"same instant in another zone", []*gdrive.File{f(idB, "2026-01-02T01:00:00+01:00"), f(idA, "2026-01-02T00:00:00Z")}, []string{idA, idB}},
		{"unreadable time last", []*gdrive.File{f(idA, "yesterday"), f(idC, "2026-01-02T00:00:00Z")}, []string{idC, idA}},
		{"bad ids and nil skipped", []*gdrive.File{f("../x", "2020-01-01T00:00:00Z"), nil, f(idB, "2026-01-02T00:00:00Z")}, []string{idB}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := oldestFirst(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("oldestFirst = %v, want %v", got, tt.want)
			}
			rev := slices.Clone(tt.in)
			slices.Reverse(rev)
			if again := oldestFirst(rev); !slices.Equal(again, got) {
				t.Errorf("in reverse order: %v, want %v (the same)", again, got)
			}
		})
	}
}
