package compose

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// DocumentedKinds reads the refusal kinds docs/operations.md lists under
// "Why sends are refused": the first column of its table.
func DocumentedKinds(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n### Why sends are refused\n")
	if !ok {
		t.Fatal(`docs/operations.md has no "### Why sends are refused" section`)
	}
	section, _, _ = strings.Cut(section, "\n#")
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|")
	kinds := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		kinds[m[1]] = true
	}
	if len(kinds) == 0 {
		t.Fatal("docs/operations.md lists no refusal kinds")
	}
	return kinds
}

// SendsOf counts the user's sends streaming or waiting for their turn.
func (s *Service) SendsOf(userID string) int {
	s.admit.mu.Lock()
	defer s.admit.mu.Unlock()
	if us := s.admit.users[userID]; us != nil {
		return us.running + len(us.queue)
	}
	return 0
}
