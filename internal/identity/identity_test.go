package identity

import (
	"context"
	"testing"
)

func TestUserTravelsInContext(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Fatal("an empty context carries a user")
	}
	u := User{ID: "u1", Email: "a@example.com", GoogleScopes: []string{"https://www.googleapis.com/auth/gmail.send"}}
	got, ok := FromContext(WithUser(context.Background(), u))
	if !ok || got.ID != "u1" || got.Email != "a@example.com" {
		t.Fatalf("FromContext = %+v, %v", got, ok)
	}
	if !got.HasScope("https://www.googleapis.com/auth/gmail.send") {
		t.Error("granted scope not found")
	}
	if got.HasScope("https://www.googleapis.com/auth/gmail.compose") {
		t.Error("a scope the user did not grant is reported granted")
	}
}
