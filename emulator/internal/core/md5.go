package core

import (
	"crypto/md5" //nolint:gosec // Drive's md5Checksum field is MD5 by definition.
	"hash"
)

func newMD5() hash.Hash { return md5.New() }
