// Package demoseed holds the sample Drive that `drivemail serve --demo`
// loads, built into the binary so the demo runs from any folder (and after
// `go install`). The files follow the emulator's seed conventions
// (docs/emulator.md, "Seed folders"); the folder files/ is also a seed
// directory that `drivemail emulator --seed` can load from a checkout.
package demoseed

import (
	"embed"
	"io/fs"
)

// files is the seed; "all:" keeps the _shared folder and .members files,
// which go:embed would otherwise leave out.
//
//go:embed all:files
var files embed.FS

// FS returns the seed: one folder per user email at its root.
func FS() fs.FS {
	sub, err := fs.Sub(files, "files")
	if err != nil {
		panic("demoseed: " + err.Error()) // "files" is a valid path: cannot happen
	}
	return sub
}
