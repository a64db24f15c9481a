package benchkit

import (
	"io"
	"strings"
)

// SyntheticMessage generates a valid message of exactly size bytes to
// to: a few headers and a body of 76-character lines. The benches' plain
// baselines upload it as a message as large as the one drivemail sent.
type SyntheticMessage struct {
	head []byte
	left int64
	line []byte
	pos  int
}

// NewSyntheticMessage is a message of size bytes (more than its headers) to to.
func NewSyntheticMessage(size int64, to string) *SyntheticMessage {
	head := []byte("From: bench@example.com\r\nTo: " + to + "\r\nSubject: bench\r\nMIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\n")
	return &SyntheticMessage{head: head, left: size - int64(len(head)), line: []byte(strings.Repeat("QUJD", 19) + "\r\n")}
}

func (s *SyntheticMessage) Read(p []byte) (int, error) {
	n := 0
	if len(s.head) > 0 {
		n = copy(p, s.head)
		s.head = s.head[n:]
	}
	for n < len(p) && s.left > 0 {
		c := copy(p[n:], s.line[s.pos:])
		if int64(c) > s.left {
			c = int(s.left)
		}
		s.pos = (s.pos + c) % len(s.line)
		s.left -= int64(c)
		n += c
	}
	if n == 0 && s.left <= 0 {
		return 0, io.EOF
	}
	return n, nil
}
