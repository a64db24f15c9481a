// Command fakemodel stands in for the model APIs of Claude Code
// (Anthropic Messages), Codex (OpenAI Responses) and Gemini CLI (Gemini
// generateContent), so the e2e suite can drive those real clients without
// the network. It plays one scripted turn: asked with tools, it calls the
// tool whose name ends in "drive_search" (a search for PDFs); given that
// tool's result, it answers with a short text. GET /_seen reports, per
// API, the tool names each client offered and the tool results it sent
// back, for the suite to check; DELETE /_seen forgets them.
//
//	fakemodel --addr 127.0.0.1:0   prints "listening on http://ADDR"
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// searchArgs are the arguments of the scripted drive_search call.
const searchArgs = `{"query":"","mime_type":"pdf"}`

// finalText is the scripted answer once the tool result is back.
const finalText = "fakemodel: the drive_search result arrived."

// seen is what the clients sent, per API ("anthropic", "openai", "gemini").
type seen struct {
	mu      sync.Mutex
	Tools   map[string][]string `json:"tools"`   // tool names offered, last request
	Results map[string][]string `json:"results"` // tool results sent back
	Paths   []string            `json:"paths"`   // every request, for debugging
}

func (s *seen) offer(api string, names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(names) > 0 {
		s.Tools[api] = names
	}
}

func (s *seen) result(api, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Results[api] = append(s.Results[api], text)
}

func (s *seen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.Paths)
}

func (s *seen) path(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.Paths) < 1000 {
		s.Paths = append(s.Paths, p)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	dump := flag.String("dump", "", "folder to write every request body to, for debugging a client")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*addr, *dump, logger); err != nil {
		logger.Error("fakemodel", "err", err)
		os.Exit(1)
	}
}

func run(addr, dump string, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &seen{Tools: map[string][]string{}, Results: map[string][]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_seen", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s)
	})
	mux.HandleFunc("DELETE /_seen", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.Tools, s.Results, s.Paths = map[string][]string{}, map[string][]string{}, nil
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) { anthropic(w, r, s) })
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) { openAI(w, r, s) })
	mux.HandleFunc("POST /v1beta/models/{call}", func(w http.ResponseWriter, r *http.Request) { gemini(w, r, s) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"type":"not_found_error","message":"fakemodel serves only the scripted turn"}}`, http.StatusNotFound)
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.path(r.Method + " " + r.URL.Path)
		logger.Info("request", "method", r.Method, "path", r.URL.Path)
		r.Body = http.MaxBytesReader(w, r.Body, 16<<20)
		if dump != "" {
			b, _ := io.ReadAll(r.Body)
			name := fmt.Sprintf("%s/%03d-%s.json", dump, s.count(), strings.ReplaceAll(strings.Trim(r.URL.Path, "/"), "/", "_"))
			_ = os.WriteFile(name, b, 0o600)
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		mux.ServeHTTP(w, r)
	})}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// searchTool returns the offered tool whose name ends in drive_search.
func searchTool(names []string) string {
	for _, n := range names {
		if strings.HasSuffix(n, "drive_search") {
			return n
		}
	}
	return ""
}

// sse writes one server-sent event.
func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

// ---- Anthropic Messages (Claude Code) ----

func anthropic(w http.ResponseWriter, r *http.Request, s *seen) {
	var body struct {
		Model    string                  `json:"model"`
		Stream   bool                    `json:"stream"`
		Tools    []struct{ Name string } `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var names []string
	for _, t := range body.Tools {
		names = append(names, t.Name)
	}
	s.offer("anthropic", names)
	// Did the last user message carry our tool's result?
	gotResult := false
	if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == "user" {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(body.Messages[n-1].Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" && b.ToolUseID == "toolu_fake_search" {
					s.result("anthropic", string(b.Content))
					gotResult = true
				}
			}
		}
	}
	tool := searchTool(names)
	content := []any{map[string]any{"type": "text", "text": finalText}}
	stop := "end_turn"
	if tool != "" && !gotResult {
		content = []any{map[string]any{"type": "tool_use", "id": "toolu_fake_search", "name": tool, "input": json.RawMessage(searchArgs)}}
		stop = "tool_use"
	}
	usage := map[string]any{"input_tokens": 10, "output_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !body.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": body.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	startSSE(w)
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_fake", "type": "message",
		"role": "assistant", "model": body.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}})
	if stop == "tool_use" {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "tool_use", "id": "toolu_fake_search", "name": tool, "input": map[string]any{}}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": searchArgs}})
	} else {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": finalText}})
	}
	sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 10}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

// ---- OpenAI Responses (Codex) ----

// offered is a tool in a Responses request.
type offered struct {
	Type  string    `json:"type"`
	Name  string    `json:"name"`
	Tools []offered `json:"tools"` // a namespace's functions (Codex puts each MCP server in one)
}

func openAI(w http.ResponseWriter, r *http.Request, s *seen) {
	var body struct {
		Model string    `json:"model"`
		Tools []offered `json:"tools"`
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// A namespaced function is offered as NAMESPACE__NAME, as Claude Code
	// names MCP tools; the call names the two apart.
	var names []string
	namespaceOf := map[string][2]string{}
	for _, t := range body.Tools {
		switch {
		case t.Type == "namespace":
			for _, f := range t.Tools {
				flat := t.Name + "__" + f.Name
				names = append(names, flat)
				namespaceOf[flat] = [2]string{t.Name, f.Name}
			}
		case t.Name != "":
			names = append(names, t.Name)
		}
	}
	s.offer("openai", names)
	gotResult := false
	for _, in := range body.Input {
		if in.Type == "function_call_output" && in.CallID == "call_fake_search" {
			s.result("openai", string(in.Output))
			gotResult = true
		}
	}
	tool := searchTool(names)
	var item map[string]any
	if tool != "" && !gotResult {
		item = map[string]any{"type": "function_call", "id": "fc_fake_search", "call_id": "call_fake_search", "name": tool,
			"arguments": searchArgs, "status": "completed"}
		if ns, ok := namespaceOf[tool]; ok {
			item["namespace"], item["name"] = ns[0], ns[1]
		}
	} else {
		item = map[string]any{"type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": finalText, "annotations": []any{}}}}
	}
	resp := map[string]any{"id": "resp_fake", "object": "response", "created_at": time.Now().Unix(), "model": body.Model, "status": "in_progress", "output": []any{}}
	startSSE(w)
	sse(w, "response.created", map[string]any{"type": "response.created", "sequence_number": 0, "response": resp})
	sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": item})
	if item["type"] == "message" {
		sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": 2, "item_id": "msg_fake",
			"output_index": 0, "content_index": 0, "delta": finalText})
	}
	sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": 3, "output_index": 0, "item": item})
	resp["status"], resp["output"] = "completed", []any{item}
	resp["usage"] = map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 20}
	sse(w, "response.completed", map[string]any{"type": "response.completed", "sequence_number": 4, "response": resp})
}

// ---- Gemini generateContent (Gemini CLI) ----

func gemini(w http.ResponseWriter, r *http.Request, s *seen) {
	call := r.PathValue("call") // MODEL:generateContent, MODEL:streamGenerateContent, MODEL:countTokens
	_, method, _ := strings.Cut(call, ":")
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if method == "countTokens" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"totalTokens":10}`)
		return
	}
	var body struct {
		Tools []struct {
			FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
		} `json:"tools"`
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse *struct {
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var names []string
	for _, t := range body.Tools {
		for _, f := range t.FunctionDeclarations {
			names = append(names, f.Name)
		}
	}
	s.offer("gemini", names)
	tool := searchTool(names)
	gotResult := false
	if n := len(body.Contents); n > 0 {
		for _, p := range body.Contents[n-1].Parts {
			if p.FunctionResponse != nil && tool != "" && p.FunctionResponse.Name == tool {
				s.result("gemini", string(p.FunctionResponse.Response))
				gotResult = true
			}
		}
	}
	part := map[string]any{"text": finalText}
	if tool != "" && !gotResult {
		part = map[string]any{"functionCall": map[string]any{"name": tool, "args": json.RawMessage(searchArgs)}}
	}
	chunk := map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
		"modelVersion":  strings.TrimSuffix(call, ":"+method),
	}
	if method == "streamGenerateContent" {
		startSSE(w)
		sse(w, "", chunk)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(chunk)
}
