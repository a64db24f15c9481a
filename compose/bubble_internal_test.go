package compose

import (
	"testing"
	"testing/synctest"
)

// inBubble is test run inside a testing/synctest bubble, for t.Run: the
// retry pauses and timeouts it waits for pass at once on the bubble's
// clock, and exactly.
func inBubble(test func(t *testing.T)) func(t *testing.T) {
	return func(t *testing.T) { synctest.Test(t, test) }
}
