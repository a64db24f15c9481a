package sqlite_test

import (
	"testing"

	"github.com/drivemail/drivemail/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.SQLite)
}
