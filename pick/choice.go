package pick

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/internal/refusal"
	"github.com/drivemail/drivemail/store"
)

// maxChoiceBody bounds the choice a page posts: a page key and at most
// MaxFiles ids with their resource keys.
const maxChoiceBody = 64 << 10

// choice is what the page posts: its page key and the files picked, of
// which only the id and resource key are read.
type choice struct {
	PageKey string `json:"page_key"`
	Files   []struct {
		ID          string `json:"id"`
		ResourceKey string `json:"resource_key"`
	} `json:"files"`
}

// Picked is a file drivemail read again after the pick: what the page
// shows and the model may attach.
type Picked struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	MimeType string `json:"mime_type"`
}

// choiceAnswer is the page's answer: the files now ready, how many
// picked ones drivemail cannot read, and what to tell the user.
type choiceAnswer struct {
	Files   []Picked `json:"files"`
	Missing int      `json:"missing"`
	Say     string   `json:"say"`
}

// choiceRefusal is a choice refused: what the page says, and whether
// opening the Picker again may help.
type choiceRefusal struct {
	Error string `json:"error"`
	Retry bool   `json:"retry"`
}

// serveChoice takes the page's choice: the page key must be live and
// this ticket's, it is spent, and each id is read again with files.get
// as the ticket's user, whose answer alone says what the file is.
func (s *Service) serveChoice(w http.ResponseWriter, r *http.Request, tok string) {
	ctx := r.Context()
	var in choice
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxChoiceBody))
	if err := dec.Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, choiceRefusal{Error: "The choice could not be read. Open the picker again."})
		return
	}
	now := s.cfg.Now()
	ticket, terr := s.seal.open(tok, aadTicket, now)
	key, kerr := s.seal.open(in.PageKey, aadPageKey, now)
	switch {
	case errors.Is(terr, errInvalid) || errors.Is(kerr, errInvalid) || key.Ticket != store.Hash(tok) || key.User != ticket.User:
		// Another ticket's page key, another user's, or none: the
		// ticket may be expired by now, the page key may not.
		writeJSON(w, http.StatusForbidden, choiceRefusal{Error: "This page cannot hand files to drivemail. Ask your assistant for a new link (drive_pick)."})
		return
	case errors.Is(kerr, errExpired):
		writeJSON(w, http.StatusGone, choiceRefusal{Error: fmt.Sprintf("This page was open longer than %v. Ask your assistant for a new link (drive_pick).", s.cfg.PageTTL)})
		return
	}
	refs, problem := s.readRefs(in)
	if problem != "" {
		writeJSON(w, http.StatusBadRequest, choiceRefusal{Error: problem, Retry: true})
		return
	}
	switch err := s.cfg.Once.UseOnce(ctx, pageKeyKey(in.PageKey), time.Unix(key.Expires, 0).Add(time.Minute)); {
	case errors.Is(err, store.ErrUsed):
		writeJSON(w, http.StatusConflict, choiceRefusal{Error: "This page has handed its choice to drivemail already. Go back to your chat."})
		return
	case err != nil:
		s.cfg.Logger.ErrorContext(ctx, "pick: record a choice", "user", key.User, "err", err)
		writeJSON(w, http.StatusServiceUnavailable, choiceRefusal{Error: "drivemail could not take the choice just now. Try again in a minute.", Retry: true})
		return
	}
	answer, err := s.reread(ctx, key.User, refs)
	if err != nil {
		// Nothing was taken: the page may send its choice again.
		if relErr := s.cfg.Once.ReleaseOnce(ctx, pageKeyKey(in.PageKey)); relErr != nil {
			s.cfg.Logger.WarnContext(ctx, "pick: give a choice back", "user", key.User, "err", relErr)
		}
		said := "drivemail could not read the files you picked just now. Try again in a minute."
		if ref, ok := refusal.As(err); ok {
			said = ref.Text
		} else {
			s.cfg.Logger.WarnContext(ctx, "pick: read the picked files", "user", key.User, "err", err)
		}
		writeJSON(w, http.StatusBadGateway, choiceRefusal{Error: said, Retry: true})
		return
	}
	s.cfg.Logger.InfoContext(ctx, "files picked", "user", key.User, "ready", len(answer.Files), "missing", answer.Missing)
	writeJSON(w, http.StatusOK, answer)
}

// readRefs checks the ids posted: at least one, at most MaxFiles, each
// shaped like a Drive id, duplicates dropped.
func (s *Service) readRefs(in choice) ([]drive.Ref, string) {
	switch {
	case len(in.Files) == 0:
		return nil, "No file was picked. Open the picker again and choose at least one."
	case len(in.Files) > s.cfg.MaxFiles:
		return nil, fmt.Sprintf("%d files were picked; choose at most %d at a time (a message's limit).", len(in.Files), s.cfg.MaxFiles)
	}
	seen := map[string]bool{}
	var refs []drive.Ref
	for _, f := range in.Files {
		if !drive.ValidID(f.ID) || len(f.ResourceKey) > 200 || strings.ContainsFunc(f.ResourceKey, func(r rune) bool { return r <= ' ' || r > '~' }) {
			return nil, "The picker answered a file drivemail cannot read. Open the picker again."
		}
		if !seen[f.ID] {
			seen[f.ID] = true
			refs = append(refs, drive.Ref{ID: f.ID, ResourceKey: f.ResourceKey})
		}
	}
	return refs, ""
}

// reread reads each picked file as userID with Drive's metadata: one
// drivemail may not read (the Picker granted another project) counts as
// missing; any other failure fails the whole choice.
func (s *Service) reread(ctx context.Context, userID string, refs []drive.Ref) (choiceAnswer, error) {
	d, err := s.cfg.Accounts.OpenID(userID).Drive(ctx)
	if err != nil {
		return choiceAnswer{}, err
	}
	answer := choiceAnswer{Files: []Picked{}}
	for _, ref := range refs {
		f, err := d.Lookup(ctx, ref)
		switch {
		case errors.Is(err, drive.ErrNotFound), errors.Is(err, drive.ErrAppNotAuthorized):
			answer.Missing++
		case err != nil:
			return choiceAnswer{}, err
		default:
			answer.Files = append(answer.Files, Picked{ID: f.ID, Name: f.Name, MimeType: f.MimeType})
		}
	}
	switch {
	case len(answer.Files) == 0:
		answer.Say = "drivemail cannot open the files you picked. Whoever runs drivemail should check its Google Cloud App ID (--google-app-id, the project number)."
	case answer.Missing > 0:
		answer.Say = fmt.Sprintf("Done, but for %d of the files you picked, which drivemail cannot open. Go back to your chat: your assistant can attach the files below.", answer.Missing)
	default:
		answer.Say = "Done. Go back to your chat: your assistant can now attach the files below."
	}
	return answer, nil
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
