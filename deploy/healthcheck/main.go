// Command healthcheck is the container's HEALTHCHECK: it asks the
// drivemail server in the same container for /healthz and exits 0 only on
// a 200. The image has no shell or curl, so this small static binary does
// it. It finds the port in DRIVEMAIL_ADDR, as serve does.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	if err := check(context.Background(), os.Getenv("DRIVEMAIL_ADDR")); err != nil {
		fmt.Fprintln(os.Stderr, "unhealthy:", err)
		os.Exit(1)
	}
}

// check GETs http://127.0.0.1:PORT/healthz, PORT taken from addr (serve's
// listen address; default 8080), within 3 seconds.
func check(ctx context.Context, addr string) error {
	port := "8080"
	if addr != "" {
		_, p, err := net.SplitHostPort(addr)
		if err != nil || p == "" || p == "0" {
			return fmt.Errorf("DRIVEMAIL_ADDR %q: want host:port with a fixed port", addr)
		}
		port = p
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort("127.0.0.1", port)+"/healthz", nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("/healthz answered %d: %s", res.StatusCode, body)
	}
	return nil
}
