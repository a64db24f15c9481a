package tools

import (
	"testing"
)

// toolsListBudget is the most tools/list may weigh on the wire: every
// conversation carries it (about four bytes to a model token), and the
// file parameters of issue 16 still have to fit.
const toolsListBudget = 12_000

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
