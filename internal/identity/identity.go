// Package identity carries the authenticated drivemail user through a
// request's context, from the bearer middleware to the tools and handlers.
package identity

import "context"

// User is the caller behind a verified drivemail access token.
type User struct {
	// ID is drivemail's stable user id (it keys the stored Google grant).
	ID string
	// Email is the Google account's address.
	Email string
	// GoogleScopes are the Google scopes the user actually granted.
	GoogleScopes []string
}

// HasScope reports whether the user granted the Google scope s.
func (u User) HasScope(s string) bool {
	for _, g := range u.GoogleScopes {
		if g == s {
			return true
		}
	}
	return false
}

type ctxKey struct{}

// WithUser returns a context that carries u.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, ctxKey{}, u)
}

// FromContext returns the user carried by ctx, if any.
func FromContext(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(ctxKey{}).(User)
	return u, ok
}
