package wan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Rate is a bandwidth in bytes per second; 0 is no cap.
type Rate int64

// Units a rate may be written in.
const (
	KB  Rate = 1000
	MB  Rate = 1000 * KB
	GB  Rate = 1000 * MB
	KiB Rate = 1 << 10
	MiB Rate = 1 << 20
	GiB Rate = 1 << 30
)

// rateUnits are the suffixes ParseRate knows, in bytes (bits are eighths).
var rateUnits = []struct {
	name  string
	bytes float64
}{
	{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"kbit", 1e3 / 8}, {"Mbit", 1e6 / 8}, {"Gbit", 1e9 / 8},
}

// ParseRate reads a rate such as "33MB/s", "16MiB/s", "100Mbit/s" or
// "2.5MB" (the "/s" may be left out); "0", "off" and "unlimited" are no
// cap. A cap is between MinRate and MaxRate.
func ParseRate(s string) (Rate, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	switch strings.ToLower(t) {
	case "0", "off", "unlimited":
		return 0, nil
	}
	i := strings.IndexFunc(t, func(c rune) bool { return (c < '0' || c > '9') && c != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("%q is not a rate such as 33MB/s, 16MiB/s or 100Mbit/s (0 is no cap)", s)
	}
	n, err := strconv.ParseFloat(t[:i], 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a rate such as 33MB/s, 16MiB/s or 100Mbit/s (0 is no cap)", s)
	}
	for _, u := range rateUnits {
		if t[i:] == u.name {
			v := n * u.bytes
			if v > float64(MaxRate) {
				return 0, fmt.Errorf("%s is faster than the fastest cap, %s (0 is no cap)", s, MaxRate)
			}
			r := Rate(math.Round(v))
			return r, r.check()
		}
	}
	return 0, fmt.Errorf("%q has no unit: use B, KB, MB, GB, KiB, MiB, GiB, kbit, Mbit or Gbit per second (as written: MB is bytes, Mbit bits)", s)
}

// check refuses a cap outside MinRate to MaxRate.
func (r Rate) check() error {
	if r != 0 && (r < MinRate || r > MaxRate) {
		return fmt.Errorf("%d B/s is outside %s to %s (0 is no cap)", int64(r), MinRate, MaxRate)
	}
	return nil
}

// String writes r in the largest unit that divides it ("33MB/s",
// "16MiB/s", "1500B/s"), or "0" for no cap.
func (r Rate) String() string {
	if r == 0 {
		return "0"
	}
	for _, u := range []struct {
		name string
		size Rate
	}{{"GiB", GiB}, {"GB", GB}, {"MiB", MiB}, {"MB", MB}, {"KiB", KiB}, {"KB", KB}} {
		if r%u.size == 0 {
			return fmt.Sprintf("%d%s/s", r/u.size, u.name)
		}
	}
	return fmt.Sprintf("%dB/s", int64(r))
}
