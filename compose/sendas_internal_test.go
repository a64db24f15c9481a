package compose

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/gmail"
)

// A refusal lists at most maxListed addresses Gmail sends from as they
// are, and says how many more there are.
func TestListVerified(t *testing.T) {
	list := func(n int) []gmail.SendAs {
		out := []gmail.SendAs{{Address: "ana@example.com", Primary: true}, {Address: "pending@example.com", Verification: gmail.VerificationPending}}
		for i := 1; i < n; i++ {
			out = append(out, gmail.SendAs{Address: fmt.Sprintf("a%d@example.com", i), Verification: gmail.VerificationAccepted})
		}
		return out
	}
	if got := listVerified(list(maxListed)); strings.Count(got, "@") != maxListed || strings.Contains(got, "more") || strings.Contains(got, "pending") {
		t.Errorf("%d verified: %q", maxListed, got)
	}
	if got := listVerified(list(maxListed + 1)); strings.Count(got, "@") != maxListed || !strings.HasSuffix(got, " (and 1 more)") {
		t.Errorf("%d verified: %q", maxListed+1, got)
	}
	if got := listVerified([]gmail.SendAs{{Address: "a\nb@example.com", Primary: true}}); got != "none is set up" {
		t.Errorf("an address that is not plain: %q", got)
	}
}
