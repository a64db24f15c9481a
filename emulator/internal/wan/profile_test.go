package wan

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
		bad  string // part of the error, when it must fail
	}{
		{in: "33MB/s", want: 33 * MB},
		{in: "16MiB/s", want: 16 * MiB},
		{in: "16MiB", want: 16 * MiB},
		{in: "100Mbit/s", want: 12_500_000},
		{in: "2.5MB/s", want: 2_500_000},
		{in: "1KiB/s", want: MinRate},
		{in: "1023B/s", bad: "outside"},
		{in: "100GiB/s", want: MaxRate},
		{in: "100.001GiB/s", bad: "faster"},
		{in: "0", want: 0},
		{in: "off", want: 0},
		{in: "unlimited/s", want: 0},
		{in: "5Mb/s", bad: "no unit"},
		{in: "fast", bad: "not a rate"},
		{in: "-1MB/s", bad: "not a rate"},
		{in: "1..2MB/s", bad: "not a rate"},
	} {
		got, err := ParseRate(tc.in)
		switch {
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("ParseRate(%q) = %v, %v; want an error about %q", tc.in, got, err, tc.bad)
		case tc.bad == "" && (err != nil || got != tc.want):
			t.Errorf("ParseRate(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestRateStringRoundTrips(t *testing.T) {
	for _, r := range []Rate{0, MinRate, 33 * MB, 16 * MiB, 12_500_000, 1500, 1025, MaxRate} {
		got, err := ParseRate(r.String())
		if err != nil || got != r {
			t.Errorf("%d B/s written %q reads back as %v, %v", int64(r), r.String(), got, err)
		}
	}
}

func TestParseSpec(t *testing.T) {
	custom := Google()
	custom.Links[Gmail].Latency = 80 * time.Millisecond
	for _, tc := range []struct {
		name, spec string
		from       Profile
		check      func(Profile) bool
		bad        string
	}{
		{name: "loopback", spec: "loopback", from: Google(), check: func(p Profile) bool { return p.IsLoopback() }},
		{name: "google", spec: " Google ", check: func(p Profile) bool { return p == Google() }},
		{name: "override", spec: "google,drive.ttfb=1s,gmail.up=8MiB/s", check: func(p Profile) bool {
			return p.Links[Drive].TTFB == time.Second && p.Links[Gmail].Up == 8*MiB && p.Links[Drive].Latency == Google().Links[Drive].Latency
		}},
		{name: "all", spec: "loopback,all.latency=50ms", check: func(p Profile) bool {
			for _, l := range p.Links {
				if l != (Link{Latency: 50 * time.Millisecond}) {
					return false
				}
			}
			return true
		}},
		{name: "overrides apply to the profile in force", spec: "drive.latency=10ms", from: custom, check: func(p Profile) bool {
			return p.Links[Drive].Latency == 10*time.Millisecond && p.Links[Gmail].Latency == 80*time.Millisecond
		}},
		{name: "longest delay", spec: "oauth.latency=1m", check: func(p Profile) bool { return p.Links[OAuth].Latency == MaxDelay }},
		{name: "delay too long", spec: "oauth.latency=1m0.000000001s", bad: "outside"},
		{name: "negative delay", spec: "drive.ttfb=-1ms", bad: "outside"},
		{name: "not a duration", spec: "drive.ttfb=soon", bad: "not a duration"},
		{name: "unknown profile", spec: "mars", bad: `no profile named "mars"`},
		{name: "unknown API", spec: "google,photos.latency=1s", bad: "no API"},
		{name: "unknown field", spec: "google,drive.jitter=1s", bad: "no field"},
		{name: "name after overrides", spec: "drive.latency=1s,google", bad: "API.FIELD=VALUE"},
		{name: "empty", spec: " ", bad: "empty"},
		{name: "longest spec", spec: paddedSpec(maxSpecLen), check: func(p Profile) bool { return p.Links[Drive].Latency == time.Second }},
		{name: "spec too long", spec: paddedSpec(maxSpecLen + 1), bad: "at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.spec, tc.from)
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("Parse(%q) = %v; want an error about %q", tc.spec, err, tc.bad)
				}
				return
			}
			if err != nil || !tc.check(p) {
				t.Fatalf("Parse(%q) = %+v, %v", tc.spec, p, err)
			}
		})
	}
}

func TestSpecRoundTrips(t *testing.T) {
	for _, spec := range []string{"loopback", "google", "google,drive.ttfb=1s,gmail.up=8MiB/s", "loopback,sheets.down=1MB/s,oauth.finish=5ms", "google,oauth.latency=0s"} {
		p, err := Parse(spec, Loopback())
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Spec(); got != spec {
			t.Errorf("Parse(%q).Spec() = %q", spec, got)
		}
		back, err := Parse(p.Spec(), Loopback())
		if err != nil || back != p {
			t.Errorf("%q does not read back as itself: %+v, %v", p.Spec(), back, err)
		}
	}
}

// paddedSpec is "google,<spaces>drive.latency=1s", n characters long.
func paddedSpec(n int) string {
	const head, tail = "google,", "drive.latency=1s"
	return head + strings.Repeat(" ", n-len(head)-len(tail)) + tail
}
