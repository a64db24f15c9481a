// Package wan makes the emulator answer like Google over a real network:
// per API (Drive, Gmail, Sheets, OAuth) a latency on every request, a
// time to first byte on downloads and exports, a wait before the answer
// that completes a media upload, and a bandwidth cap each way. The
// default, loopback, adds nothing. docs/emulator.md says where the
// numbers of the "google" profile come from.
package wan

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// API is one of the emulated Google APIs a request can belong to.
type API int

// The APIs, in the order profiles list them.
const (
	Drive API = iota
	Gmail
	Sheets
	OAuth
	numAPIs
)

var apiNames = [numAPIs]string{"drive", "gmail", "sheets", "oauth"}

// String is the API's name in specs and JSON ("drive", "gmail", …).
func (a API) String() string {
	if a < 0 || a >= numAPIs {
		return fmt.Sprintf("API(%d)", int(a))
	}
	return apiNames[a]
}

// Link is what one API's requests meet between the client and Google.
type Link struct {
	// Latency holds every answer until this long after its request (and
	// the request's body) arrived: a round trip plus Google's handling.
	Latency time.Duration
	// TTFB holds a successful download's or export's answer this much
	// longer: Google finding the bytes before the first one leaves.
	TTFB time.Duration
	// Finish holds the answer that completes a media upload this much
	// longer: Google storing (or sending) what it received.
	Finish time.Duration
	// Down caps response bodies, Up request bodies, in bytes per second
	// of each request; 0 is no cap.
	Down, Up Rate
}

// Profile is a Link per API, and the named profile it started from.
type Profile struct {
	// Base names the profile the links were set from ("loopback",
	// "google"); Spec lists how they differ from it.
	Base  string
	Links [numAPIs]Link
}

// Loopback adds nothing: the emulator answers as fast as it can.
func Loopback() Profile { return Profile{Base: "loopback"} }

// Google is a server in a cloud region near Google's front ends, with
// figures measured in public or, where none is published, assumed; see
// docs/emulator.md for each source.
func Google() Profile {
	return Profile{Base: "google", Links: [numAPIs]Link{
		Drive: {
			Latency: 230 * time.Millisecond,
			TTFB:    200 * time.Millisecond,
			Finish:  450 * time.Millisecond,
			Down:    33 * MB,
			Up:      16 * MB,
		},
		Gmail: {
			Latency: 100 * time.Millisecond,
			Finish:  500 * time.Millisecond,
			Down:    33 * MB,
			Up:      16 * MB,
		},
		Sheets: {
			Latency: 230 * time.Millisecond,
			Down:    33 * MB,
			Up:      16 * MB,
		},
		OAuth: {
			Latency: 60 * time.Millisecond,
		},
	}}
}

// profiles are the named profiles a spec may start with.
var profiles = map[string]func() Profile{"loopback": Loopback, "google": Google}

// Limits of a profile's values and of a spec.
const (
	// MaxDelay bounds a latency, TTFB or finish: above Google's clients'
	// own patience, below a test's.
	MaxDelay = time.Minute
	// MinRate is the slowest cap: slower would make one 5 MiB upload
	// chunk outlast any client's timeout.
	MinRate Rate = 1 << 10
	// MaxRate is the fastest cap (a loopback copy is about this fast).
	MaxRate Rate = 100 << 30
	// maxSpecLen bounds a spec's length, and so its item count.
	maxSpecLen = 1024
)

// Link returns a's link.
func (p Profile) Link(a API) Link { return p.Links[a] }

// IsLoopback reports whether p adds nothing to any request.
func (p Profile) IsLoopback() bool { return p.Links == [numAPIs]Link{} }

// Parse reads a spec: a profile name, then comma-separated overrides
// API.FIELD=VALUE, where API is drive, gmail, sheets, oauth or all, FIELD
// is latency, ttfb or finish (a duration such as 80ms) or down or up (a
// rate such as 10MiB/s, 80Mbit/s or 0 for no cap):
//
//	google
//	google,drive.ttfb=1s,all.up=2MiB/s
//	drive.latency=50ms
//
// Overrides without a name apply to from (the profile in force).
func Parse(spec string, from Profile) (Profile, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Profile{}, errors.New(`empty spec: give a profile name ("loopback" or "google") and/or overrides such as drive.latency=80ms`)
	}
	if len(spec) > maxSpecLen {
		return Profile{}, fmt.Errorf("spec of %d characters; at most %d", len(spec), maxSpecLen)
	}
	items := strings.Split(spec, ",")
	p := from
	if name := strings.TrimSpace(items[0]); !strings.Contains(name, "=") {
		mk, ok := profiles[strings.ToLower(name)]
		if !ok {
			return Profile{}, fmt.Errorf(`no profile named %q: use "loopback" or "google"`, name)
		}
		p = mk()
		items = items[1:]
	}
	for _, item := range items {
		if err := p.apply(strings.TrimSpace(item)); err != nil {
			return Profile{}, err
		}
	}
	return p, nil
}

// apply sets one API.FIELD=VALUE override.
func (p *Profile) apply(item string) error {
	key, value, ok := strings.Cut(item, "=")
	api, field, dotted := strings.Cut(strings.ToLower(strings.TrimSpace(key)), ".")
	if !ok || !dotted {
		return fmt.Errorf("%q is not API.FIELD=VALUE (such as drive.latency=80ms); a profile name comes first", item)
	}
	var targets []API
	if api == "all" {
		targets = []API{Drive, Gmail, Sheets, OAuth}
	} else {
		a, err := parseAPI(api)
		if err != nil {
			return err
		}
		targets = []API{a}
	}
	for _, a := range targets {
		if err := p.Links[a].set(field, strings.TrimSpace(value)); err != nil {
			return fmt.Errorf("%s: %w", item, err)
		}
	}
	return nil
}

func parseAPI(s string) (API, error) {
	for a, name := range apiNames {
		if s == name {
			return API(a), nil
		}
	}
	return 0, fmt.Errorf("no API named %q: use drive, gmail, sheets, oauth or all", s)
}

// set changes one field of l from its text.
func (l *Link) set(field, value string) error {
	switch field {
	case "latency", "ttfb", "finish":
		d, err := parseDelay(value)
		if err != nil {
			return err
		}
		*l.delay(field) = d
	case "down", "up":
		r, err := ParseRate(value)
		if err != nil {
			return err
		}
		if field == "down" {
			l.Down = r
		} else {
			l.Up = r
		}
	default:
		return fmt.Errorf("no field %q: use latency, ttfb, finish, down or up", field)
	}
	return nil
}

func (l *Link) delay(field string) *time.Duration {
	switch field {
	case "ttfb":
		return &l.TTFB
	case "finish":
		return &l.Finish
	default:
		return &l.Latency
	}
}

// parseDelay reads a duration between 0 and MaxDelay.
func parseDelay(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 80ms or 1.5s", s)
	}
	return d, checkDelay(d)
}

func checkDelay(d time.Duration) error {
	if d < 0 || d > MaxDelay {
		return fmt.Errorf("%s is outside 0 to %s", d, MaxDelay)
	}
	return nil
}

// Spec is the shortest spec that gives p: its base profile's name, then
// each field that differs from it.
func (p Profile) Spec() string {
	base := Loopback
	if mk, ok := profiles[p.Base]; ok {
		base = mk
	}
	b := base()
	items := []string{b.Base}
	for a := range numAPIs {
		have, want := p.Links[a], b.Links[a]
		add := func(field, v string) { items = append(items, fmt.Sprintf("%s.%s=%s", a, field, v)) }
		if have.Latency != want.Latency {
			add("latency", have.Latency.String())
		}
		if have.TTFB != want.TTFB {
			add("ttfb", have.TTFB.String())
		}
		if have.Finish != want.Finish {
			add("finish", have.Finish.String())
		}
		if have.Down != want.Down {
			add("down", have.Down.String())
		}
		if have.Up != want.Up {
			add("up", have.Up.String())
		}
	}
	return strings.Join(items, ",")
}
