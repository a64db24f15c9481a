package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/upload"
)

// The MCP file-transfer draft (SEP-2631), behind --file-transfer. It
// stays in the transport because the MCP library cannot carry it: it
// takes no handler for a method it does not know, its capabilities have
// no place for a top-level "files" (only extensions and experimental),
// and its tool type has no field for the inputFiles sidecar. So this layer
// answers the draft's upload method in both spellings
// (files/prepareUpload, the first revision; files/authorizeUpload, later
// ones and Codex's client, which targets the SEP at commit c3cf0eb:
// docs/clients.md) and amends two of the library's answers through
// libWriter: initialize gets the files capability when the client
// declared it, and tools/list the inputFiles sidecar.

// Transfers issues file-transfer URIs; *upload.Service satisfies it.
type Transfers interface {
	PrepareTransfer(ctx context.Context, req upload.TransferRequest) (upload.TransferTicket, error)
}

// The draft's method names.
const (
	methodPrepareUpload   = "files/prepareUpload"
	methodAuthorizeUpload = "files/authorizeUpload"
)

// fileTransfer is the draft's part of /mcp.
type fileTransfer struct {
	transfers  Transfers
	inputFiles map[string]json.RawMessage // tool → inputFiles sidecar
	logger     *slog.Logger
}

// serve answers m if it is one of the draft's methods, and reports
// whether it did.
func (f *fileTransfer) serve(ctx context.Context, w http.ResponseWriter, m message, body []byte) bool {
	if m.Method != methodPrepareUpload && m.Method != methodAuthorizeUpload {
		return false
	}
	if !m.isRequest() {
		w.WriteHeader(http.StatusAccepted) // a notification: nothing to answer
		return true
	}
	result, rpcErr := f.prepare(ctx, m, body)
	writeRPC(w, m.ID, result, rpcErr)
	return true
}

// prepareParams are both revisions' request parameters.
type prepareParams struct {
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Size     *int64 `json:"size"`
	Digest   *struct {
		Algorithm string `json:"algorithm"`
		Value     string `json:"value"`
	} `json:"digest"`
}

// rpcError is a JSON-RPC error; data carries the draft's machine-readable
// reason.
type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

func (f *fileTransfer) prepare(ctx context.Context, m message, body []byte) (any, *rpcError) {
	var req struct {
		Params prepareParams `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &rpcError{Code: -32602, Message: "The params must be an object with name, mimeType and size.", Data: map[string]any{"reason": "invalidParams"}}
	}
	p := req.Params
	tr := upload.TransferRequest{Name: p.Name, MimeType: p.MimeType, Size: p.Size}
	if strings.TrimSpace(tr.Name) == "" {
		tr.Name = "file" // later revisions make the name optional; Drive needs one
	}
	if p.Digest != nil {
		sum, err := upload.SHA256FromDigest(p.Digest.Algorithm, p.Digest.Value)
		if err != nil {
			return nil, uploadRPCError(err)
		}
		tr.SHA256 = sum
	}
	t, err := f.transfers.PrepareTransfer(ctx, tr)
	if err != nil {
		if e := uploadRPCError(err); e != nil {
			return nil, e
		}
		f.logger.ErrorContext(ctx, "file transfer: prepare failed", "err", err.Error())
		return nil, &rpcError{Code: -32603, Message: "drivemail could not prepare the upload; try again.", Data: map[string]any{"reason": "endpointUnavailable"}}
	}
	file := map[string]any{"uri": t.URI, "name": t.Name}
	if t.MimeType != "" {
		file["mimeType"] = t.MimeType
	}
	if t.Size != nil {
		file["size"] = *t.Size
	}
	descriptor := map[string]any{
		"transport": "https",
		"method":    http.MethodPost,
		"url":       t.UploadURL,
		// The draft's example names the file part and a token field; the
		// same URL also takes the raw file by PUT.
		"multipart": map[string]any{"fileField": "file", "fields": map[string]string{"token": t.Token}},
		"expiresAt": t.ExpiresAt.UTC().Format(time.RFC3339),
	}
	key := "transfer" // files/prepareUpload: {file, transfer}
	if m.Method == methodAuthorizeUpload {
		key = "upload" // files/authorizeUpload: {file, upload}
	}
	if u, ok := identity.FromContext(ctx); ok {
		f.logger.InfoContext(ctx, "file transfer prepared", "user", u.ID, "method", m.Method)
	}
	return map[string]any{"file": file, key: descriptor}, nil
}

// uploadRPCError turns an upload refusal into the draft's error: the
// caller's to fix (-32602) with its sentence, or nil for an internal one.
func uploadRPCError(err error) *rpcError {
	var ue *upload.Error
	if !errors.As(err, &ue) || ue.Status >= 500 && ue.Status != http.StatusNotImplemented {
		return nil
	}
	reason := string(ue.Kind)
	switch {
	case ue.Status == http.StatusRequestEntityTooLarge:
		reason = "maxSizeExceeded"
	case ue.Status == http.StatusTooManyRequests:
		reason = "quotaExceeded"
	case ue.Status == http.StatusForbidden:
		reason = "unauthorized"
	}
	return &rpcError{Code: -32602, Message: ue.Text, Data: map[string]any{"reason": reason}}
}

// writeRPC answers one JSON-RPC request.
func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, e *rpcError) {
	resp := map[string]any{"jsonrpc": "2.0", "id": id}
	if e != nil {
		resp["error"] = e
	} else {
		resp["result"] = result
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(resp)
}

// filesCapability is what drivemail says it does of the draft: uploads
// over https (transport "https", multipart or PUT); no file outputs.
var filesCapability = json.RawMessage(`{"inputTransfer":true,"output":false,"transports":["https"]}`)

// amend returns how to amend the library's answer to m, or nil;
// declared says whether an initialize declared the files capability.
func (f *fileTransfer) amend(m message, declared bool) func(result map[string]json.RawMessage) {
	switch m.Method {
	case "initialize":
		if !declared {
			return nil
		}
		return func(result map[string]json.RawMessage) {
			var caps map[string]json.RawMessage
			if json.Unmarshal(result["capabilities"], &caps) != nil || caps == nil {
				caps = map[string]json.RawMessage{}
			}
			caps["files"] = filesCapability
			result["capabilities"], _ = json.Marshal(caps)
		}
	case "tools/list":
		return func(result map[string]json.RawMessage) {
			var tools []map[string]json.RawMessage
			if json.Unmarshal(result["tools"], &tools) != nil {
				return
			}
			for _, t := range tools {
				var name string
				_ = json.Unmarshal(t["name"], &name)
				if side, ok := f.inputFiles[name]; ok {
					t["inputFiles"] = side
				}
			}
			result["tools"], _ = json.Marshal(tools)
		}
	}
	return nil
}
