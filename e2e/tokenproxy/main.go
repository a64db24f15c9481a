// Command tokenproxy forwards HTTP requests to a drivemail server, adding
// `Authorization: Bearer $DEMO_TOKEN`, for test suites that cannot send a
// bearer token themselves (the MCP conformance suite). drivemail has no
// switch that turns authorization off; this proxy is how such a suite
// reaches it. It keeps the client's Host and Origin headers, so the
// server's DNS-rebinding guard sees what the suite sent. Test use only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "localhost:0", "listen address (the conformance suite wants a localhost URL)")
	target := flag.String("target", "", "base URL of the drivemail server, such as http://127.0.0.1:8080")
	flag.Parse()
	token := os.Getenv("DEMO_TOKEN")
	if err := run(*listen, *target, token); err != nil {
		fmt.Fprintln(os.Stderr, "tokenproxy:", err)
		os.Exit(1)
	}
}

func run(listen, target, token string) error {
	if token == "" {
		return errors.New("DEMO_TOKEN is not set")
	}
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("-target %q: want a base URL such as http://127.0.0.1:8080", target)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	proxy := &httputil.ReverseProxy{
		// Director (not Rewrite) keeps the inbound Host header.
		//lint:ignore SA1019 Director is kept on purpose: it passes the inbound Host header through unchanged
		Director: func(r *http.Request) {
			r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
			r.Header.Set("Authorization", "Bearer "+token)
		},
		FlushInterval: -1, // pass server-sent events through at once
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	fmt.Printf("proxy listening on http://localhost:%s\n", port)
	log.SetFlags(0)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
