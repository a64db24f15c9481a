package wan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/drivemail/drivemail/emulator/internal/core"
)

// linkJSON is a Link as /_emulator/wan shows it: durations as "230ms",
// rates as "33MB/s" (or "0", no cap).
type linkJSON struct {
	Latency string `json:"latency"`
	TTFB    string `json:"ttfb"`
	Finish  string `json:"finish"`
	Down    string `json:"down"`
	Up      string `json:"up"`
}

// linkPatch is a Link change: only the fields given change.
type linkPatch struct {
	Latency *string `json:"latency"`
	TTFB    *string `json:"ttfb"`
	Finish  *string `json:"finish"`
	Down    *string `json:"down"`
	Up      *string `json:"up"`
}

// profileJSON is the body of GET, PUT and POST /_emulator/wan.
type profileJSON struct {
	Spec   string   `json:"spec"`
	Drive  linkJSON `json:"drive"`
	Gmail  linkJSON `json:"gmail"`
	Sheets linkJSON `json:"sheets"`
	OAuth  linkJSON `json:"oauth"`
}

// profileChange is what PUT and POST /_emulator/wan read.
type profileChange struct {
	Spec   *string    `json:"spec"`
	Drive  *linkPatch `json:"drive"`
	Gmail  *linkPatch `json:"gmail"`
	Sheets *linkPatch `json:"sheets"`
	OAuth  *linkPatch `json:"oauth"`
}

// MarshalJSON writes p as /_emulator/wan shows it.
func (p Profile) MarshalJSON() ([]byte, error) {
	show := func(l Link) linkJSON {
		return linkJSON{Latency: l.Latency.String(), TTFB: l.TTFB.String(), Finish: l.Finish.String(),
			Down: l.Down.String(), Up: l.Up.String()}
	}
	return json.Marshal(profileJSON{Spec: p.Spec(), Drive: show(p.Links[Drive]), Gmail: show(p.Links[Gmail]),
		Sheets: show(p.Links[Sheets]), OAuth: show(p.Links[OAuth])})
}

// apply makes the change on from: the spec first (a name in it starts
// over from that profile), then each field given.
func (c profileChange) apply(from Profile) (Profile, error) {
	p := from
	if c.Spec != nil {
		var err error
		if p, err = Parse(*c.Spec, from); err != nil {
			return Profile{}, err
		}
	}
	for a, patch := range [numAPIs]*linkPatch{Drive: c.Drive, Gmail: c.Gmail, Sheets: c.Sheets, OAuth: c.OAuth} {
		if patch == nil {
			continue
		}
		for _, f := range []struct {
			name string
			v    *string
		}{{"latency", patch.Latency}, {"ttfb", patch.TTFB}, {"finish", patch.Finish}, {"down", patch.Down}, {"up", patch.Up}} {
			if f.v == nil {
				continue
			}
			if err := p.Links[a].set(f.name, *f.v); err != nil {
				return Profile{}, fmt.Errorf("%s.%s: %w", API(a), f.name, err)
			}
		}
	}
	return p, nil
}

// maxControlBody bounds a PUT or POST to /_emulator/wan.
const maxControlBody = 16 << 10

// Register adds GET, PUT and POST /_emulator/wan. GET shows the profile
// in force; PUT replaces it (starting from loopback), POST changes it
// (starting from the one in force); both take {"spec": "…"} and/or
// per-API fields as GET shows them, and answer the result.
func (s *Shaper) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /_emulator/wan", func(w http.ResponseWriter, r *http.Request) {
		core.WriteJSON(w, http.StatusOK, s.Profile())
	})
	mux.HandleFunc("PUT /_emulator/wan", func(w http.ResponseWriter, r *http.Request) { s.change(w, r, Loopback()) })
	mux.HandleFunc("POST /_emulator/wan", func(w http.ResponseWriter, r *http.Request) { s.change(w, r, s.Profile()) })
}

func (s *Shaper) change(w http.ResponseWriter, r *http.Request, from Profile) {
	c, err := readChange(w, r)
	if err != nil {
		core.WriteError(w, http.StatusBadRequest, "badRequest",
			`want JSON such as {"spec": "google,drive.ttfb=1s"} or {"gmail": {"latency": "80ms", "up": "8MiB/s"}}: `+err.Error())
		return
	}
	p, err := c.apply(from)
	if err != nil {
		core.WriteError(w, http.StatusBadRequest, "badRequest", err.Error())
		return
	}
	s.Set(p)
	core.WriteJSON(w, http.StatusOK, p)
}

// readChange reads one JSON object of at most maxControlBody bytes.
func readChange(w http.ResponseWriter, r *http.Request) (profileChange, error) {
	var c profileChange
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxControlBody))
	if err != nil {
		return c, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return c, errors.New("more than one JSON value")
	}
	return c, nil
}
