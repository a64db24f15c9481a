package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/mail"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/drivemail/drivemail/account"
	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/emulator/emutest"
	"github.com/drivemail/drivemail/internal/identity"
	"github.com/drivemail/drivemail/store"
	"github.com/drivemail/drivemail/store/storetest"
	"github.com/drivemail/drivemail/tools"
	"github.com/drivemail/drivemail/upload"
)

// The file-transfer draft's flow, driven by a client written against the
// draft's JSON: the go-sdk's streamable transport, used for raw JSON-RPC
// messages, since no SDK knows the draft's methods. Behind it: the real
// upload service and compose, a real store, the emulated Google.

var transferScopes = []string{emutest.ScopeDriveFile, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend, emutest.ScopeGmailReadonly}

// transferUsers are the test users with the scopes uploads need.
var transferUsers = map[string]identity.User{
	testToken:  {ID: "user-1", Email: "demo@example.com", GoogleScopes: transferScopes},
	otherToken: {ID: "user-2", Email: "other@example.com", GoogleScopes: transferScopes},
}

type transferAuth struct{ fakeAuth }

func (a transferAuth) RequireBearer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := transferUsers[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(identity.WithUser(r.Context(), u)))
	})
}

// emuClients gives each test user their emulated Google client.
type emuClients struct {
	env *emutest.Env
}

func (c emuClients) Client(_ context.Context, userID string) (*http.Client, error) {
	for _, u := range transferUsers {
		if u.ID == userID {
			return c.env.Client(u.Email, transferScopes...), nil
		}
	}
	return nil, store.ErrNotFound
}

func newTransferServer(t *testing.T) (*testServer, *emutest.Env) {
	t.Helper()
	env := emutest.Start(t)
	st := storetest.SQLite(t).Open(t, store.Options{})
	t.Cleanup(func() { st.Close() })
	accounts := account.NewDoor(emuClients{env: env}, account.Options{Endpoints: env.Endpoints})
	ts := newTestServer(t, func(d *Deps) {
		uploads, err := upload.New(upload.Config{BaseURL: d.BaseURL, Secrets: [][]byte{bytes.Repeat([]byte("k"), 32)},
			Accounts: accounts, Limits: st, Transfers: st})
		if err != nil {
			t.Fatal(err)
		}
		mail := compose.New(compose.Config{Transfers: uploads})
		d.Auth = transferAuth{fakeAuth{base: d.BaseURL.String()}}
		d.Accounts = accounts
		d.Tools = tools.Deps{Drive: fakeDrive{}, Mail: accountMail{compose: mail}}
		d.Uploads = uploads
		d.FileTransfer = callerTransfers{uploads: uploads, door: accounts}
	})
	return ts, env
}

// rawClient sends the draft's JSON over the go-sdk's transport.
type rawClient struct {
	t    *testing.T
	conn sdk.Connection
	next float64
}

func dial(t *testing.T, ts *testServer, token string) *rawClient {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token}}}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &rawClient{t: t, conn: conn}
}

// call sends one request and returns its result, or its error's code,
// message and data.
func (c *rawClient) call(method, params string) (json.RawMessage, *jsonrpc.Error) {
	c.t.Helper()
	c.next++
	id, _ := jsonrpc.MakeID(c.next)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(params)}); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	for {
		msg, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("%s: read: %v", method, err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok || resp.ID != id {
			continue // a notification
		}
		if resp.Error != nil {
			var we *jsonrpc.Error
			b, _ := json.Marshal(resp.Error)
			_ = json.Unmarshal(b, &we)
			if we == nil || we.Code == 0 {
				we = &jsonrpc.Error{Code: -1, Message: resp.Error.Error()}
			}
			return nil, we
		}
		return resp.Result, nil
	}
}

func (c *rawClient) initialize(withFiles bool) json.RawMessage {
	caps := `{}`
	if withFiles {
		caps = `{"files":{"inputTransfer":true,"output":false,"transports":["https"]}}`
	}
	res, err := c.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"draft-client","version":"1"}}`)
	if err != nil {
		c.t.Fatalf("initialize: %+v", err)
	}
	return res
}

// descriptor is both revisions' answer: the file, and where its bytes go.
type descriptor struct {
	File struct {
		URI      string `json:"uri"`
		Name     string `json:"name"`
		MimeType string `json:"mimeType"`
		Size     int64  `json:"size"`
	} `json:"file"`
	Transfer *transferDescriptor `json:"transfer"`
	Upload   *transferDescriptor `json:"upload"`
}

type transferDescriptor struct {
	Transport string `json:"transport"`
	Method    string `json:"method"`
	URL       string `json:"url"`
	Multipart struct {
		FileField string            `json:"fileField"`
		Fields    map[string]string `json:"fields"`
	} `json:"multipart"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// send follows a descriptor as the draft's example does: a multipart
// POST with its fields, then the file under fileField.
func (d transferDescriptor) send(t *testing.T, name string, data []byte) *http.Response {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range d.Multipart.Fields {
		_ = mw.WriteField(k, v)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="`+d.Multipart.FileField+`"; filename="`+name+`"`)
	h.Set("Content-Type", "application/pdf")
	w, _ := mw.CreatePart(h)
	w.Write(data)
	mw.Close()
	req, _ := http.NewRequest(d.Method, d.URL, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestFileTransferDraftFlow(t *testing.T) {
	ts, env := newTransferServer(t)
	c := dial(t, ts, testToken)

	// initialize: the files capability, for a client that declares it.
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(c.initialize(true), &init)
	if string(init.Capabilities["files"]) != string(filesCapability) {
		t.Fatalf("initialize capabilities = %s; want files", init.Capabilities)
	}
	// tools/list: file_uris, with both revisions' declarations.
	res, rpcErr := c.call("tools/list", `{}`)
	if rpcErr != nil {
		t.Fatal(rpcErr)
	}
	var list struct {
		Tools []struct {
			Name        string                     `json:"name"`
			InputFiles  map[string]json.RawMessage `json:"inputFiles"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
		} `json:"tools"`
	}
	json.Unmarshal(res, &list)
	declared := 0
	for _, tl := range list.Tools {
		if _, ok := tl.InputFiles["file_uris"]; ok && strings.Contains(string(tl.InputSchema.Properties["file_uris"]), `"x-mcp-file"`) {
			declared++
		}
	}
	if declared != 2 {
		t.Fatalf("%d tools declare file_uris both ways, want send_email and create_draft:\n%s", declared, res)
	}

	data := bytes.Repeat([]byte("%PDF-1.4 transfer "), 20_000)
	sum := sha256.Sum256(data)
	digest := base64.RawURLEncoding.EncodeToString(sum[:])
	for _, method := range []string{"files/prepareUpload", "files/authorizeUpload"} {
		t.Run(method, func(t *testing.T) {
			res, rpcErr := c.call(method, `{"name":"scan.pdf","mimeType":"application/pdf","size":`+itoa(len(data))+`,"digest":{"algorithm":"sha-256","value":"`+digest+`"}}`)
			if rpcErr != nil {
				t.Fatalf("%s: %+v", method, rpcErr)
			}
			var d descriptor
			json.Unmarshal(res, &d)
			td := d.Transfer
			if method == "files/authorizeUpload" {
				td = d.Upload
			}
			if td == nil || td.Transport != "https" || td.Method != http.MethodPost || td.Multipart.FileField != "file" || td.Multipart.Fields["token"] == "" ||
				!strings.HasPrefix(d.File.URI, "mcp-file://") || d.File.Name != "scan.pdf" || d.File.Size != int64(len(data)) {
				t.Fatalf("%s answered %s", method, res)
			}
			// Before the upload the URI names nothing yet.
			if r := sendWith(c, d.File.URI); !r.IsError || !strings.Contains(r.text(), "not finished uploading") {
				t.Fatalf("send before the upload: %s", r.text())
			}
			if resp := td.send(t, "scan.pdf", data); resp.StatusCode != http.StatusCreated {
				t.Fatalf("upload: %s", resp.Status)
			}
			r := sendWith(c, d.File.URI)
			if r.IsError {
				t.Fatalf("send_email with the URI: %s", r.text())
			}
			var out struct {
				ID string `json:"id"`
			}
			json.Unmarshal(r.StructuredContent, &out)
			if got := attachmentOf(t, env.Message("demo@example.com", out.ID)); !bytes.Equal(got, data) {
				t.Fatalf("the sent attachment has %d bytes that are not the %d uploaded", len(got), len(data))
			}

			// Another user's call with the same URI reads as an unknown one.
			other := dial(t, ts, otherToken)
			other.initialize(false)
			theirs := sendWith(other, d.File.URI)
			unknown := sendWith(other, strings.TrimRight(d.File.URI, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")+"AAAAAAAAAAAAAAAAAAAAAA")
			if !theirs.IsError || !strings.Contains(theirs.text(), "no file has the URI") ||
				strings.ReplaceAll(theirs.text(), d.File.URI, "U") != strings.ReplaceAll(unknown.text(), strings.TrimRight(d.File.URI, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")+"AAAAAAAAAAAAAAAAAAAAAA", "U") {
				t.Fatalf("another user's URI:\n%s\nan unknown one:\n%s", theirs.text(), unknown.text())
			}
		})
	}
}

// toolResult is a tools/call result.
type toolResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func (r toolResult) text() string {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

func sendWith(c *rawClient, uri string) toolResult {
	c.t.Helper()
	args, _ := json.Marshal(map[string]any{"name": "send_email", "arguments": map[string]any{
		"to": "zoe@example.org", "subject": "the scan", "body_text": "attached", "file_uris": []string{uri}}})
	res, rpcErr := c.call("tools/call", string(args))
	if rpcErr != nil {
		c.t.Fatalf("tools/call: %+v", rpcErr)
	}
	var r toolResult
	json.Unmarshal(res, &r)
	return r
}

// attachmentOf decodes the one attachment of a raw message.
func attachmentOf(t *testing.T, raw []byte) []byte {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	_, params, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	mr := multipart.NewReader(m.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err != nil {
			t.Fatal("no attachment in the message")
		}
		if strings.HasPrefix(p.Header.Get("Content-Disposition"), "attachment") {
			b, err := io.ReadAll(base64.NewDecoder(base64.StdEncoding, strings.NewReader(strings.NewReplacer("\r", "", "\n", "").Replace(readAll(p)))))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}

func readAll(r io.Reader) string {
	b, _ := io.ReadAll(r)
	return string(b)
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestFileTransferOff: without --file-transfer the draft's methods are
// unknown (-32601, as the draft says), initialize says nothing of files,
// and tools/list is the usual one.
func TestFileTransferOff(t *testing.T) {
	ts := newTestServer(t, nil)
	c := dial(t, ts, testToken)
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(c.initialize(true), &init)
	if _, ok := init.Capabilities["files"]; ok {
		t.Fatalf("files capability without --file-transfer: %s", init.Capabilities["files"])
	}
	for _, m := range []string{"files/prepareUpload", "files/authorizeUpload"} {
		if _, err := c.call(m, `{"name":"a.pdf","size":1}`); err == nil || err.Code != -32601 {
			t.Errorf("%s: %+v, want -32601", m, err)
		}
	}
	res, _ := c.call("tools/list", `{}`)
	if bytes.Contains(res, []byte("file_uris")) || bytes.Contains(res, []byte("inputFiles")) {
		t.Fatal("tools/list offers file_uris without --file-transfer")
	}
}

// TestFileTransferRefusals: what the caller must fix is -32602 with the
// draft's reason and a sentence.
func TestFileTransferRefusals(t *testing.T) {
	ts, _ := newTransferServer(t)
	c := dial(t, ts, testToken)
	// A client that declares no files capability is told of none.
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(c.initialize(false), &init)
	if _, ok := init.Capabilities["files"]; ok || init.Capabilities["tools"] == nil {
		t.Fatalf("capabilities for a client without files: %s", mustJSON(init.Capabilities))
	}
	for params, reason := range map[string]string{
		`{"name":"big.bin","size":2000000000}`:                                    "maxSizeExceeded",
		`{"name":"a.pdf","size":1,"digest":{"algorithm":"sha-256","value":"!!"}}`: "bad_sha256",
		`{"name":"doc","mimeType":"application/vnd.google-apps.document"}`:        "google_type",
	} {
		_, err := c.call("files/prepareUpload", params)
		if err == nil || err.Code != -32602 || !strings.Contains(string(mustJSON(err.Data)), reason) || err.Message == "" {
			t.Errorf("%s: %+v, want -32602 with reason %s", params, err, reason)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
