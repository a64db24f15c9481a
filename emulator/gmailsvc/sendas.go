package gmailsvc

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/mail"
	"path"
	"slices"
	"strings"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// scopeSettingsBasic manages basic mail settings; it also reads send-as
// aliases (gmail-api.json, users.settings.sendAs.list).
const scopeSettingsBasic = "https://www.googleapis.com/auth/gmail.settings.basic"

// sendAsScopes are users.settings.sendAs.list's and .get's (discovery):
// gmail.send and gmail.compose are not among them.
var sendAsScopes = []string{scopeFull, scopeModify, scopeReadonly, scopeSettingsBasic}

// Verification statuses of a custom "from" alias (SendAs.verificationStatus).
const (
	VerificationAccepted = "accepted"
	VerificationPending  = "pending"
)

// SendAs is one of a user's send-as addresses, Gmail's SendAs resource
// (gmail-api.json), as users.settings.sendAs answers it and
// SetSendAs takes it.
type SendAs struct {
	SendAsEmail    string `json:"sendAsEmail"`
	DisplayName    string `json:"displayName,omitempty"`
	ReplyToAddress string `json:"replyToAddress,omitempty"`
	// Signature is HTML; Gmail's web UI adds it to new mail, the API never.
	Signature string `json:"signature,omitempty"`
	IsPrimary bool   `json:"isPrimary,omitempty"`
	IsDefault bool   `json:"isDefault,omitempty"`
	// TreatAsAlias and VerificationStatus apply to custom aliases only.
	TreatAsAlias       bool   `json:"treatAsAlias,omitempty"`
	VerificationStatus string `json:"verificationStatus,omitempty"`
}

// sendAsFields are SendAs's properties and listSendAsFields
// ListSendAsResponse's, for `fields`.
var (
	sendAsFields     = setOf("displayName", "isDefault", "isPrimary", "replyToAddress", "sendAsEmail", "signature", "smtpMsa", "treatAsAlias", "verificationStatus")
	listSendAsFields = setOf("sendAs")
)

// maxSendAs bounds one user's aliases (Gmail allows up to 99).
const maxSendAs = 100

// primarySendAs is the send-as every account has until told otherwise: its
// own address, named after it, with a one-line signature.
func primarySendAs(user string) SendAs {
	name := core.DisplayName(user)
	return SendAs{SendAsEmail: user, DisplayName: name, IsPrimary: true, IsDefault: true,
		Signature: `<div dir="ltr">` + html.EscapeString(name) + `</div>`}
}

// sendAsOf returns user's send-as list, the primary first. The caller
// holds s.mu.
func (s *Service) sendAsOf(user string) []SendAs {
	if list, ok := s.sendAs[user]; ok {
		return list
	}
	return []SendAs{primarySendAs(user)}
}

// SendAsList returns user's send-as addresses, the primary first.
func (s *Service) SendAsList(user string) []SendAs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sendAsOf(strings.ToLower(user)))
}

// SetSendAs replaces user's send-as addresses. An entry for the user's own
// address is the primary (one is added when missing); exactly one entry
// may be the default (the primary when none is); custom aliases take a
// verification status, accepted unless said. It refuses a list Gmail
// could not hold.
func (s *Service) SetSendAs(user string, list []SendAs) error {
	user = strings.ToLower(strings.TrimSpace(user))
	if _, err := mail.ParseAddress(user); err != nil || !strings.Contains(user, "@") {
		return fmt.Errorf("send-as: user %q is not an email address", user)
	}
	out, err := checkSendAs(user, list)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sendAs == nil {
		s.sendAs = map[string][]SendAs{}
	}
	s.sendAs[user] = out
	return nil
}

// checkSendAs normalizes a send-as list for user, the primary first.
func checkSendAs(user string, list []SendAs) ([]SendAs, error) {
	if len(list) > maxSendAs {
		return nil, fmt.Errorf("send-as: %d addresses, at most %d", len(list), maxSendAs)
	}
	primary := primarySendAs(user)
	primary.IsDefault = false
	var aliases []SendAs
	defaults, seen := 0, map[string]bool{}
	for _, a := range list {
		a.SendAsEmail = strings.ToLower(strings.TrimSpace(a.SendAsEmail))
		if p, err := mail.ParseAddress(a.SendAsEmail); err != nil || p.Address != a.SendAsEmail {
			return nil, fmt.Errorf("send-as: %q is not an email address", a.SendAsEmail)
		}
		if seen[a.SendAsEmail] {
			return nil, fmt.Errorf("send-as: %s appears twice", a.SendAsEmail)
		}
		seen[a.SendAsEmail] = true
		if a.IsDefault {
			defaults++
		}
		if a.SendAsEmail == user {
			a.IsPrimary, a.TreatAsAlias, a.VerificationStatus = true, false, ""
			primary = a
			continue
		}
		if a.IsPrimary {
			return nil, fmt.Errorf("send-as: only %s, the account's own address, is the primary", user)
		}
		switch a.VerificationStatus {
		case "":
			a.VerificationStatus = VerificationAccepted
		case VerificationAccepted, VerificationPending:
		default:
			return nil, fmt.Errorf("send-as: verificationStatus %q: want accepted or pending", a.VerificationStatus)
		}
		if a.IsDefault && a.VerificationStatus != VerificationAccepted {
			return nil, fmt.Errorf("send-as: %s is pending: only a verified address can be the default", a.SendAsEmail)
		}
		aliases = append(aliases, a)
	}
	if defaults > 1 {
		return nil, errors.New("send-as: more than one address is the default; Gmail has exactly one")
	}
	if defaults == 0 {
		primary.IsDefault = true
	}
	return append([]SendAs{primary}, aliases...), nil
}

// verifiedFrom reports whether user may send as address (the primary, or
// an accepted alias), and the default send-as Gmail puts in its place.
// The caller holds s.mu.
func (s *Service) verifiedFrom(user, address string) (ok bool, def SendAs) {
	for _, a := range s.sendAsOf(user) {
		if a.IsDefault {
			def = a
		}
		if strings.EqualFold(a.SendAsEmail, address) && (a.IsPrimary || a.VerificationStatus == VerificationAccepted) {
			ok = true
		}
	}
	return ok, def
}

// listSendAs serves users.settings.sendAs.list: every address, unpaged.
func (s *Service) listSendAs(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorize(w, r, sendAsScopes)
	if !ok {
		return
	}
	mask, res, ok := maskOf(r.URL.Query(), listSendAsFields)
	if !ok {
		writeResult(w, res)
		return
	}
	body := map[string]any{"sendAs": s.SendAsList(tok.Email)}
	core.WriteJSON(w, http.StatusOK, mask.Apply(toMap(body)))
}

// getSendAs serves users.settings.sendAs.get: 404 for an address that is
// not one of the user's ("Fails with an HTTP 404 error if the specified
// address is not a member of the collection").
func (s *Service) getSendAs(w http.ResponseWriter, r *http.Request) {
	tok, ok := s.authorize(w, r, sendAsScopes)
	if !ok {
		return
	}
	mask, res, ok := maskOf(r.URL.Query(), sendAsFields)
	if !ok {
		writeResult(w, res)
		return
	}
	for _, a := range s.SendAsList(tok.Email) {
		if strings.EqualFold(a.SendAsEmail, r.PathValue("sendAsEmail")) {
			core.WriteJSON(w, http.StatusOK, mask.Apply(toMap(a)))
			return
		}
	}
	writeResult(w, notFound())
}

// sendAsFile is where a seed's user folder keeps its send-as addresses:
// EMAIL/_mail/sendas.json, ListSendAsResponse's shape.
const sendAsFile = "sendas.json"

// seedSendAs loads user's send-as addresses from a seed, if it has them.
func (s *Service) seedSendAs(fsys fs.FS, user string) error {
	name := path.Join(user, mailFolder, sendAsFile)
	b, err := fs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("seed %s: %w", name, err)
	}
	var list struct {
		SendAs []SendAs `json:"sendAs"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		return fmt.Errorf("seed %s: %w", name, err)
	}
	if err := s.SetSendAs(user, list.SendAs); err != nil {
		return fmt.Errorf("seed %s: %w", name, err)
	}
	return nil
}

// registerSendAs adds GET and PUT /_emulator/gmail/sendas?user=EMAIL: a
// user's send-as addresses, as users.settings.sendAs.list answers them.
func (s *Service) registerSendAs(mux *http.ServeMux) {
	mux.HandleFunc("GET /_emulator/gmail/sendas", func(w http.ResponseWriter, r *http.Request) {
		user := r.URL.Query().Get("user")
		if !strings.Contains(user, "@") {
			core.WriteError(w, http.StatusBadRequest, "badRequest", "Name the account: ?user=EMAIL.")
			return
		}
		core.WriteJSON(w, http.StatusOK, map[string]any{"sendAs": s.SendAsList(user)})
	})
	mux.HandleFunc("PUT /_emulator/gmail/sendas", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			SendAs []SendAs `json:"sendAs"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", `Send {"sendAs": [{"sendAsEmail": …, "verificationStatus": "accepted"|"pending", …}]}.`)
			return
		}
		user := r.URL.Query().Get("user")
		if err := s.SetSendAs(user, body.SendAs); err != nil {
			core.WriteError(w, http.StatusBadRequest, "badRequest", err.Error()+".")
			return
		}
		core.WriteJSON(w, http.StatusOK, map[string]any{"sendAs": s.SendAsList(user)})
	})
}
