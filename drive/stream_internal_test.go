package drive

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"testing"
	"time"
)

// BenchmarkCheckedBodyMD5: what the MD5 check costs a 25 MiB download read
// as mimemsg reads it (32 KiB at a time), against the same reads without
// a checksum and against MD5 over the whole file in one call, the least
// hashing can cost. It reports the check's cost per read pass and its
// ratio to that least (1.0: hashing in the same pass costs nothing more).
func BenchmarkCheckedBodyMD5(b *testing.B) {
	const size = 25 << 20
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 31)
	}
	sum := md5.Sum(data)
	md5hex := hex.EncodeToString(sum[:])
	buf := make([]byte, 32<<10)
	read := func(md5hex string) time.Duration {
		start := time.Now()
		body := newCheckedBody(io.NopCloser(bytes.NewReader(data)), size, md5hex)
		for {
			_, err := body.Read(buf)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	var plain, checked, alone time.Duration
	for i := 0; i < b.N; i++ {
		plain += read("")
		checked += read(md5hex)
		start := time.Now()
		md5.Sum(data)
		alone += time.Since(start)
	}
	b.SetBytes(size)
	n := float64(b.N)
	b.ReportMetric(float64((checked-plain).Microseconds())/1000/n, "md5-ms/op")
	b.ReportMetric(float64(alone.Microseconds())/1000/n, "md5-alone-ms/op")
	b.ReportMetric(float64(checked-plain)/float64(alone), "in-pass/alone")
}
