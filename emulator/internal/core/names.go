package core

import "strings"

// DisplayName makes "Ann Lee" of "ann.lee@example.com": the name Drive's
// User resources and Gmail's send-as addresses show for an emulated
// account, which has no profile to take one from.
func DisplayName(email string) string {
	local, _, _ := strings.Cut(email, "@")
	parts := strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '_' || r == '-' || r == '+' })
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	if len(parts) == 0 {
		return email
	}
	return strings.Join(parts, " ")
}
