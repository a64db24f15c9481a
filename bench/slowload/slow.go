package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// slowRoute is one kind of slow client: a request whose body is announced
// long and sent a byte at a time.
type slowRoute struct {
	name, method, path, contentType string
	length                          int    // the Content-Length announced
	token                           string // a bearer token to send, if any
}

// The routes a slow client can reach before any token, each with the
// largest body its server accepts, which is what a client wasting the
// server's memory would pick.
var slowRoutes = []slowRoute{
	{"POST /mcp without a token", "POST", "/mcp", "application/json", 4 << 20, ""},
	{"POST /oauth/token", "POST", "/oauth/token", "application/x-www-form-urlencoded", 32 << 10, ""},
	{"POST /oauth/register", "POST", "/oauth/register", "application/json", 32 << 10, ""},
	{"PUT /upload/<forged ticket>", "PUT", "/upload/dmut_forged-ticket-for-slowload", "application/pdf", 100 << 20, ""},
}

// signedInRoute is one signed-in user's slow MCP request: the largest
// body /mcp takes, with the user's token.
func signedInRoute(token string) slowRoute {
	return slowRoute{"POST /mcp with one user's token", "POST", "/mcp", "application/json", 4 << 20, token}
}

// slowResult is what happened to one slow client.
type slowResult struct {
	route  int
	status string        // the status line's code, "" if none came
	closed time.Duration // from connecting until the server closed; 0 if it did not
	sent   int           // body bytes sent
	err    error         // a failure to connect or to send the head
}

// runSlowClients opens n slow clients at once, spread over routes, each
// sending a body byte every interval (with burst, after all but the last
// byte of the body at once) until the server closes its connection or
// limit passes, and returns what happened to each. No body ever ends.
func runSlowClients(ctx context.Context, base string, routes []slowRoute, n int, interval, limit time.Duration, burst bool) []slowResult {
	u, _ := url.Parse(base)
	results := make([]slowResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { results[i] = slowClient(ctx, u.Host, routes, i%len(routes), interval, limit, burst) })
	}
	wg.Wait()
	return results
}

func slowClient(ctx context.Context, addr string, routes []slowRoute, route int, interval, limit time.Duration, burst bool) slowResult {
	r := routes[route]
	res := slowResult{route: route}
	start := time.Now()
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", addr)
	if err != nil {
		res.err = err
		return res
	}
	defer c.Close()
	auth := ""
	if r.token != "" {
		auth = "Authorization: Bearer " + r.token + "\r\n"
	}
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%sUser-Agent: slowload\r\n\r\n{",
		r.method, r.path, addr, r.contentType, r.length, auth)
	if _, err := io.WriteString(c, head); err != nil {
		res.err = err
		return res
	}
	res.sent = 1

	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = c.SetReadDeadline(start.Add(limit))
		br := bufio.NewReader(c)
		if line, err := br.ReadString('\n'); err == nil {
			if f := strings.Fields(line); len(f) >= 2 {
				res.status = f[1]
			}
		}
		_, err := io.Copy(io.Discard, br)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return // still open at the limit
		}
		res.closed = time.Since(start)
	}()
	if burst {
		res.sent += sendAllBut(c, r.length-res.sent-1)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-closed:
			return res
		case <-ctx.Done():
			_ = c.SetReadDeadline(time.Now())
			<-closed
			return res
		case <-tick.C:
			if res.sent < r.length-1 { // the body never ends
				if _, err := c.Write([]byte(" ")); err == nil {
					res.sent++
				}
			}
		}
	}
}

// reportSlow prints, per route, how the server ended its slow clients, and
// says whether every one was closed within closeBy (their body deadline,
// deadline, and slack).
func reportSlow(results []slowResult, routes []slowRoute, deadline, closeBy time.Duration) bool {
	fmt.Printf("slow clients (body deadline %s, target: closed within %s):\n", deadline, closeBy)
	ok := true
	for i, r := range routes {
		var n, closed, failed int
		var worst time.Duration
		var statuses []string
		count := map[string]int{}
		for _, s := range results {
			if s.route != i {
				continue
			}
			n++
			switch {
			case s.err != nil:
				failed++
			case s.closed > 0:
				closed++
				worst = max(worst, s.closed)
			}
			status := s.status
			if status == "" {
				status = "none"
			}
			if count[status]++; count[status] == 1 {
				statuses = append(statuses, status)
			}
		}
		slices.Sort(statuses)
		for j, st := range statuses {
			statuses[j] = fmt.Sprintf("%d×%s", count[st], st)
		}
		routeOK := closed == n && worst <= closeBy
		ok = ok && routeOK
		fmt.Printf("  %-30s %3d opened, %3d closed by the server, slowest after %6.2f s, answered %s: %s\n",
			r.name, n, closed, worst.Seconds(), strings.Join(statuses, ","), verdict(routeOK))
		if failed > 0 {
			fmt.Printf("  %-30s %3d could not connect or send their headers\n", "", failed)
		}
	}
	return ok
}

// sendAllBut writes n bytes of body as fast as the server takes them and
// returns how many it took before it stopped reading or closed.
func sendAllBut(c net.Conn, n int) int {
	chunk := make([]byte, 32<<10)
	for i := range chunk {
		chunk[i] = ' '
	}
	sent := 0
	for sent < n {
		k, err := c.Write(chunk[:min(len(chunk), n-sent)])
		sent += k
		if err != nil {
			break
		}
	}
	return sent
}
