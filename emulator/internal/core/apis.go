package core

import (
	"fmt"
	"hash/fnv"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// API is one Google API the emulator serves, as Google names it in
// errors: its short name, its service name and its title.
type API struct {
	Name    string // "drive", "gmail", "sheets"
	Service string // "drive.googleapis.com"
	Title   string // "Google Drive API"
	// prefixes are the URL paths the API answers under.
	prefixes []string
}

// APIs are the emulated APIs. OAuth, export links and the /_emulator/
// routes belong to none.
var APIs = []API{
	{Name: "drive", Service: "drive.googleapis.com", Title: "Google Drive API",
		prefixes: []string{"/drive/v3/", "/upload/drive/v3/", "/resumable/upload/drive/v3/"}},
	{Name: "gmail", Service: "gmail.googleapis.com", Title: "Gmail API",
		prefixes: []string{"/gmail/v1/", "/upload/gmail/v1/", "/resumable/upload/gmail/v1/"}},
	{Name: "sheets", Service: "sheets.googleapis.com", Title: "Google Sheets API",
		prefixes: []string{"/v4/spreadsheets"}},
}

// APIOf is the API a request path belongs to.
func APIOf(path string) (API, bool) {
	for _, a := range APIs {
		for _, p := range a.prefixes {
			if strings.HasPrefix(path, p) {
				return a, true
			}
		}
	}
	return API{}, false
}

// apiByName finds an API by its short name.
func apiByName(name string) (API, bool) {
	for _, a := range APIs {
		if a.Name == name {
			return a, true
		}
	}
	return API{}, false
}

// ProjectNumber is the Google Cloud project an OAuth client id belongs
// to: the digits Google's client ids start with
// ("123456789012-abc.apps.googleusercontent.com"), or for the emulator's
// free-form ids a stable 12-digit number made from the id.
func ProjectNumber(clientID string) string {
	if head, _, ok := strings.Cut(clientID, "-"); ok && head != "" && strings.Trim(head, "0123456789") == "" {
		return head
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(clientID))
	return strconv.FormatUint(100000000000+h.Sum64()%900000000000, 10)
}

// ServiceDisabled is Google's answer to a call of an API the caller's
// project has not enabled: 403 PERMISSION_DENIED, the legacy errors item
// (reason accessNotConfigured, domain usageLimits) and the details
// ErrorInfo (reason SERVICE_DISABLED with service, consumer and
// activationUrl), LocalizedMessage and Help, as Google sends them.
func ServiceDisabled(api API, project string) ErrorBody {
	url := "https://console.developers.google.com/apis/api/" + api.Service + "/overview?project=" + project
	msg := fmt.Sprintf("%s has not been used in project %s before or it is disabled. Enable it by visiting %s then retry. "+
		"If you enabled this API recently, wait a few minutes for the action to propagate to our systems and retry.", api.Title, project, url)
	b := NewError(http.StatusForbidden, "accessNotConfigured", msg)
	b.Error.Errors[0].Domain = "usageLimits"
	b.Error.Errors[0].ExtendedHelp = "https://console.developers.google.com"
	return b.WithDetails(
		ErrorInfo("SERVICE_DISABLED", DomainGoogleAPIs, map[string]string{
			"service": api.Service, "serviceTitle": api.Title, "consumer": "projects/" + project,
			"containerInfo": project, "activationUrl": url,
		}),
		LocalizedMessage(msg),
		Help("Google developers console API activation", url),
	)
}

// Switches records which APIs are turned off, as a Google Cloud project
// that never enabled them: every call to one answers ServiceDisabled.
// The zero value has every API enabled.
type Switches struct {
	mu       sync.Mutex
	disabled map[string]bool
}

// Set turns the API named name ("drive", "gmail", "sheets") on or off.
func (s *Switches) Set(name string, enabled bool) error {
	if _, ok := apiByName(name); !ok {
		return fmt.Errorf("unknown API %q: want one of %s", name, strings.Join(apiNames(), ", "))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.disabled == nil {
		s.disabled = map[string]bool{}
	}
	if enabled {
		delete(s.disabled, name)
	} else {
		s.disabled[name] = true
	}
	return nil
}

// State maps every API's short name to whether it is enabled.
func (s *Switches) State() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, a := range APIs {
		out[a.Name] = !s.disabled[a.Name]
	}
	return out
}

func (s *Switches) off(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disabled[name]
}

func apiNames() []string {
	var names []string
	for _, a := range APIs {
		names = append(names, a.Name)
	}
	sort.Strings(names)
	return names
}

// Middleware answers a call of a turned-off API with ServiceDisabled for
// the project of the token's OAuth client. A call without a valid token
// goes on to its handler, which answers 401: Google finds the project
// from the credentials, so it cannot tell whom to refuse before that.
func (s *Switches) Middleware(accounts *Accounts, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api, ok := APIOf(r.URL.Path)
		if !ok || !s.off(api.Name) {
			next.ServeHTTP(w, r)
			return
		}
		tok, ok := accounts.Lookup(BearerToken(r))
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		WriteErrorBody(w, ServiceDisabled(api, ProjectNumber(tok.ClientID)))
	})
}
