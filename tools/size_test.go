package tools

import (
	"testing"
)

// toolsListBudget is the most the default tools/list may weigh on the
// wire: every conversation carries it (about four bytes to a model
// token). Issue 13 set it, and it holds with issue 16's file parameters
// and save_to_drive, which every user sees (11,969 bytes): room was made
// by saying each thing once, in the tool's description or in its
// argument's, not in both. The list where mail is read has its own
// budget (mailToolsListBudget).
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
