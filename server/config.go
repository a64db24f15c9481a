// Package server wires drivemail's HTTP surface: the routes, the middleware
// around them, and the process lifecycle from start to graceful shutdown.
package server

import "time"

// Config is everything `drivemail serve` is told on its command line.
type Config struct {
	Addr               string
	BaseURL            string
	Store              string
	Secrets            [][]byte // first encrypts and signs; all decrypt
	GoogleClientID     string
	GoogleClientSecret string
	GoogleEndpoint     string
	Demo               bool
	Drafts             bool
	MaxUploadBytes     int64
	MaxConcurrentSends int
	ShutdownGrace      time.Duration
	LogLevel           string
	Version            string
}
