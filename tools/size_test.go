package tools

import (
	"testing"
)

// toolsListBudget is the most tools/list may weigh on the wire: every
// conversation carries it (about four bytes to a model token). It was
// 12,000 with room for issue 16's file parameters (which took 758 bytes:
// 11,914); issue 16's sixth tool, save_to_drive, takes 1,087 more, at its
// leanest that still says when to use each argument.
const toolsListBudget = 13_100

// TestToolsListSize prints what tools/list weighs and fails above the
// budget. Run: go test ./tools -run TestToolsListSize -v
func TestToolsListSize(t *testing.T) {
	h := newHarness(t, nil)
	n := len(h.rpc("tools/list", map[string]any{}))
	t.Logf("tools/list result: %d bytes (budget %d), about %d tokens", n, toolsListBudget, n/4)
	if n > toolsListBudget {
		t.Errorf("tools/list is %d bytes, over its %d-byte budget", n, toolsListBudget)
	}
}
