package drive

import (
	"errors"
	"testing"

	"github.com/drivemail/drivemail/google"
)

// TestCheckContentURL: the user's token goes only to Google's download
// hosts over https, or to the emulator's origin and its other loopback
// name; never to another host, port, scheme or a URL with credentials.
func TestCheckContentURL(t *testing.T) {
	real := &Client{}
	emu := &Client{endpoints: google.Endpoints{Base: "http://127.0.0.1:9090"}}
	tests := []struct {
		c    *Client
		url  string
		want bool
	}{
		{real, "https://www.googleapis.com/drive/v3/files/abc?alt=media&source=downloadUrl", true},
		{real, "https://drive.usercontent.google.com/download?id=abc&export=download", true},
		{real, "https://doc-0s-sheets.googleusercontent.com/export/x", true},
		{real, "http://www.googleapis.com/drive/v3/files/abc", false},
		{real, "https://www.googleapis.com:8443/x", false},
		{real, "https://evil.example/googleusercontent.com", false},
		{real, "https://googleusercontent.com.evil.example/x", false},
		{real, "https://user:pw@www.googleapis.com/x", false},
		{real, "https://docs.google.com/spreadsheets/export?id=abc", false},
		{real, "::not a url", false},
		{emu, "http://127.0.0.1:9090/download?id=a&op=b", true},
		{emu, "http://localhost:9090/download?id=a&op=b", true},
		{emu, "http://[::1]:9090/download", true},
		{emu, "http://localhost:9091/download", false},
		{emu, "https://localhost:9090/download", false},
		{emu, "http://example.com:9090/download", false},
		{emu, "https://www.googleapis.com/drive/v3/files/abc", false},
	}
	for _, tt := range tests {
		_, err := tt.c.checkContentURL(tt.url)
		if (err == nil) != tt.want || (err != nil && !errors.Is(err, ErrBadContentURL)) {
			t.Errorf("checkContentURL(%q) against %q = %v, want allowed %v", tt.url, tt.c.endpoints.Base, err, tt.want)
		}
	}
}
