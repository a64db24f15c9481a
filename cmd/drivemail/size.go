package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteSize is a flag of bytes, given as a whole number of bytes or of
// KiB, MiB or GiB (256MiB).
type byteSize int64

// sizeUnits are the suffixes byteSize reads, largest first.
var sizeUnits = []struct {
	suffix string
	bytes  int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

func (b *byteSize) String() string { return formatSize(int64(*b)) }

func (b *byteSize) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

// parseSize reads a size as byteSize takes it.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	unit := int64(1)
	for _, u := range sizeUnits {
		if len(s) > len(u.suffix) && strings.EqualFold(s[len(s)-len(u.suffix):], u.suffix) {
			s, unit = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("not a size: give whole bytes, or KiB, MiB or GiB, such as 256MiB")
	}
	return n * unit, nil
}

// formatSize writes n in the largest unit that divides it.
func formatSize(n int64) string {
	for _, u := range sizeUnits {
		if n != 0 && n%u.bytes == 0 {
			return fmt.Sprintf("%d%s", n/u.bytes, u.suffix)
		}
	}
	return strconv.FormatInt(n, 10)
}

// envSize is a size flag's default taken from the environment when set
// there.
func envSize(getenv func(string) string, key string, def int64) (int64, error) {
	v := getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := parseSize(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is %v", errUsage, key, v, err)
	}
	return n, nil
}
