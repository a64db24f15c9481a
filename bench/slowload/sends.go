package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// sender is the signed-in demo user, sending small messages through MCP
// the way Claude.ai does: no session id, a JSON answer.
type sender struct {
	base, token string
	session     string // an Mcp-Session-Id to send, if the user initialized
	client      http.Client
	n           int
}

// initialize starts a session, as the SDK clients do, and keeps its id.
func (s *sender) initialize(ctx context.Context) error {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slowload","version":"1"}}}`
	resp, _, err := s.post(ctx, []byte(body))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		return fmt.Errorf("initialize: HTTP %d without a session id", resp.StatusCode)
	}
	s.session = resp.Header.Get("Mcp-Session-Id")
	return nil
}

// post sends one JSON-RPC message to /mcp as the user.
func (s *sender) post(ctx context.Context, body []byte) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/mcp", bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if s.session != "" {
		req.Header.Set("Mcp-Session-Id", s.session)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, b, err
}

// pause between sends keeps the user's load modest on a shared machine.
const pause = 100 * time.Millisecond

type sendResult struct {
	took time.Duration
	err  error
}

// send sends one small message and says how long it took.
func (s *sender) send(ctx context.Context) sendResult {
	s.n++
	call, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.n, "method": "tools/call", "params": map[string]any{
		"name": "send_email", "arguments": map[string]any{"to": "ana@example.com", "subject": fmt.Sprintf("slowload %d", s.n), "body_text": "A small message."}}})
	start := time.Now()
	resp, body, err := s.post(ctx, call)
	took := time.Since(start)
	var out struct {
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	switch {
	case err != nil:
		return sendResult{err: err}
	case resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || out.Result == nil:
		return sendResult{err: fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, body)}
	case out.Result.IsError:
		return sendResult{err: fmt.Errorf("refused: %.200s", body)}
	}
	return sendResult{took: took}
}

// sendStats sums up a phase's sends.
type sendStats struct {
	ok, failed int
	p50, max   time.Duration
	firstError error
}

func (s sendStats) String() string {
	out := fmt.Sprintf("%d sends succeeded, %d failed, latency p50 %s, max %s", s.ok, s.failed, s.p50.Round(time.Millisecond), s.max.Round(time.Millisecond))
	if s.firstError != nil {
		out += fmt.Sprintf(" (first failure: %v)", s.firstError)
	}
	return out
}

// sendUntil sends one message after another until stop is closed, and
// lets the send under way finish.
func (s *sender) sendUntil(ctx context.Context, stop <-chan struct{}) sendStats {
	var st sendStats
	var took []time.Duration
	for {
		select {
		case <-stop:
			if len(took) > 0 {
				slices.Sort(took)
				st.p50, st.max = took[len(took)/2], took[len(took)-1]
			}
			return st
		default:
		}
		r := s.send(ctx)
		switch {
		case r.err != nil && errors.Is(r.err, context.Canceled):
			// interrupted
		case r.err != nil:
			st.failed++
			if st.firstError == nil {
				st.firstError = r.err
			}
		default:
			st.ok++
			took = append(took, r.took)
		}
		waitOrDone(ctx, pause)
	}
}
