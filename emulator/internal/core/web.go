package core

import (
	"html"
	"net"
	"net/http"
)

// ContentOrigin is the second host name the emulator serves file content
// on, as Google serves downloads and export links from hosts apart from
// its APIs (drive.usercontent.google.com, *.googleusercontent.com). On
// loopback it is the other name of the same listener: localhost for
// 127.0.0.1 and back, so a client that sends its token only to the
// hosts it expects can be tested. Any other host has no second name
// here, and the content stays on it.
func ContentOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + ContentHost(r.Host)
}

// ContentHost is the content host name that pairs with host (see
// ContentOrigin); a port is kept.
func ContentHost(host string) string {
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, ""
	}
	switch name {
	case "127.0.0.1", "::1":
		name = "localhost"
	case "localhost":
		name = "127.0.0.1"
	}
	if port == "" {
		return name
	}
	return net.JoinHostPort(name, port)
}

// SignInPath is where the emulator's stand-in for Google's sign-in page
// lives (accounts.google.com/ServiceLogin at Google).
const SignInPath = "/ServiceLogin"

// WriteSignInPage answers 200 text/html with a Google-like sign-in page:
// what Google's web endpoints (export links, docs.google.com) give a
// request whose credentials do not reach the file. A client that does not
// check the Content-Type takes it for the file.
func WriteSignInPage(w http.ResponseWriter, continueURL string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache, no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Google Drive: Sign-in</title></head><body>" +
		"<h1>Sign in</h1><p>to continue to Google Drive</p><form method=\"post\" action=\"" + SignInPath + "\">" +
		"<input type=\"hidden\" name=\"continue\" value=\"" + html.EscapeString(continueURL) + "\">" +
		"<label>Email or phone <input type=\"email\" name=\"identifier\"></label><button>Next</button></form>" +
		"<p>(The drivemail emulator's stand-in for Google's sign-in page.)</p></body></html>\n"))
}
