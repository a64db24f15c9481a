package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/drivemail/drivemail/compose"
	"github.com/drivemail/drivemail/drive"
	"github.com/drivemail/drivemail/upload"
)

var update = flag.Bool("update", false, "rewrite testdata/tools/*.json from the current tool definitions")

// TestSnapshots compares each tool as tools/list returns it with its
// snapshot, so any schema or description change is a visible diff.
// Rewrite them with: go test ./tools -run TestSnapshots -update
func TestSnapshots(t *testing.T) {
	h := newHarness(t, func(d *Deps) { d.DraftsEnabled = true })
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(h.rpc("tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	want := []string{"create_draft", "drive_get_file", "drive_search", "request_upload", "save_to_drive", "send_draft", "send_email"}
	if len(list.Tools) != len(want) {
		t.Fatalf("tools/list has %d tools, want %d", len(list.Tools), len(want))
	}
	dir := filepath.Join("..", "testdata", "tools")
	seen := map[string]bool{}
	for _, raw := range list.Tools {
		var head struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			t.Fatal(err)
		}
		seen[head.Name] = true
		matchSnapshot(t, filepath.Join(dir, head.Name+".json"), raw, "TestSnapshots")
	}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("tools/list lacks %s", n)
		}
	}
}

// matchSnapshot compares a tool as tools/list returns it (raw) with its
// snapshot at path, or rewrites the snapshot with -update; test names
// the test that rewrites it.
func matchSnapshot(t *testing.T, path string, raw json.RawMessage, test string) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, pretty.Bytes()) {
		t.Errorf("%s differs from its snapshot (%v); if the change is intended, run: go test ./tools -run %s -update\ngot:\n%s", path, err, test, pretty.String())
	}
}

// checkVariantSnapshots compares each tool h lists that differs from the
// default tools/list with its snapshot in testdata/tools/dir (test names
// the test that rewrites them with -update), and returns their names.
func checkVariantSnapshots(t *testing.T, h *harness, dir, test string) []string {
	t.Helper()
	var list, defaults struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(h.rpc("tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(newHarness(t, nil).rpc("tools/list", map[string]any{}), &defaults); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join("..", "testdata", "tools", dir)
	var written []string
	for _, raw := range list.Tools {
		if slices.ContainsFunc(defaults.Tools, func(d json.RawMessage) bool { return bytes.Equal(d, raw) }) {
			continue
		}
		var head struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &head)
		written = append(written, head.Name)
		matchSnapshot(t, filepath.Join(dir, head.Name+".json"), raw, test)
	}
	slices.Sort(written)
	return written
}

// TestDefinitions checks what a model and a client rely on in every tool:
// schemas compile, every hint is set, descriptions say how to proceed.
func TestDefinitions(t *testing.T) {
	var defs []mcp.Tool
	for _, st := range Tools(Deps{}) {
		defs = append(defs, st.Tool)
	}
	// The definitions Filter swaps in where mail is read.
	defs = append(defs, sendEmailTool(true, true), createDraftTool(true, true), saveToDriveTool(true))
	// And file mode's.
	defs = append(defs, drivePickTool(), driveSearchFileTool())
	// And those of a client that renders views.
	defs = append(defs, composeTool(sendEmailTool(true, true)), composeTool(createDraftTool(false, false)), viewedPickTool())
	for _, tool := range defs {
		t.Run(tool.Name, func(t *testing.T) {
			compileSchema(t, tool.Name+" input", tool.RawInputSchema)
			compileSchema(t, tool.Name+" output", tool.RawOutputSchema)
			a := tool.Annotations
			if a.Title == "" || tool.Title == "" || a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
				t.Errorf("annotations not all set: %+v", a)
			}
			var in struct {
				Type                 string `json:"type"`
				AdditionalProperties *bool  `json:"additionalProperties"`
			}
			if err := json.Unmarshal(tool.RawInputSchema, &in); err != nil {
				t.Fatal(err)
			}
			if in.Type != "object" || in.AdditionalProperties == nil || *in.AdditionalProperties {
				t.Errorf("input schema must be a closed object: %+v", in)
			}
			if len(tool.Description) < 150 {
				t.Errorf("description too thin for a model to use cold (%d chars)", len(tool.Description))
			}
		})
	}
}

// TestDescriptionsTeachTheFlow reads the tools cold, as a model does: a
// tool's description and its input schema's (where each thing is said
// once) name the step a model needs next, in the default list and where
// mail is read.
func TestDescriptionsTeachTheFlow(t *testing.T) {
	must := map[string][]string{
		"drive_search":   {"send_email", "page_token", "trash"},
		"drive_get_file": {"drive_search", "\"sheet\""},
		"send_email": {"drive_search", "request_upload", "mcp-file://", "export_formats", "without it, a link", "cid:",
			fmt.Sprintf("%d files", compose.MaxFiles), fmt.Sprintf("%d MiB", compose.MaxAttachmentBytes>>20), "sends again"},
		"create_draft":   {"send_email", "review"},
		"request_upload": {"curl", "mcp-file://", "send_email", "drive_search"},
		"search_mail":    {"reply_to", "forward", "save_to_drive", "\"message_id\"", "page_token", "never instructions"},
		"save_to_drive":  {"send_email", "mcp-file://", "folder_id"},
		"send_draft":     {"create_draft", "reviewed", "sent once"},
	}
	for _, st := range Tools(Deps{}) {
		read := st.Tool.Description + "\n" + string(st.Tool.RawInputSchema)
		for _, w := range must[st.Tool.Name] {
			if !strings.Contains(read, w) {
				t.Errorf("%s's description and arguments do not mention %q", st.Tool.Name, w)
			}
		}
	}
	withMail := map[string][]string{
		"send_email":    {"reply_to", "forward", "\"message_id\"", "search_mail"},
		"create_draft":  {"reply_to", "forward"},
		"save_to_drive": {"search_mail", "send_email", "mcp-file://", "folder_id", "link: true", "(file)"},
	}
	for _, tool := range []mcp.Tool{sendEmailTool(false, true), createDraftTool(false, true), saveToDriveTool(true)} {
		for _, w := range withMail[tool.Name] {
			if !strings.Contains(tool.Description, w) {
				t.Errorf("%s's mail description does not mention %q", tool.Name, w)
			}
		}
	}
}

// sendSchema is the part of send_email's input schema the tests read.
type sendSchema struct {
	Properties struct {
		Attachments struct {
			XFile       bool   `json:"x-file"`
			MaxItems    int    `json:"maxItems"`
			Description string `json:"description"`
			Items       struct {
				AnyOf []struct {
					Properties map[string]struct {
						XFile       bool   `json:"x-file"`
						Description string `json:"description"`
					} `json:"properties"`
				} `json:"anyOf"`
			} `json:"items"`
		} `json:"attachments"`
		References struct {
			MaxItems int `json:"maxItems"`
		} `json:"references"`
		Files struct {
			MaxItems int `json:"maxItems"`
		} `json:"files"`
	} `json:"properties"`
}

func readSendSchema(t *testing.T, raw json.RawMessage) sendSchema {
	t.Helper()
	var s sendSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Properties.Attachments.Items.AnyOf) != 2 {
		t.Fatalf("attachments items: want a string or an object, got %d choices", len(s.Properties.Attachments.Items.AnyOf))
	}
	return s
}

// TestFileFieldsMarked checks the x-file markers chat middlewares look for,
// and that the attachment object has exactly the fields the parser reads.
func TestFileFieldsMarked(t *testing.T) {
	for name, raw := range map[string]json.RawMessage{"send_email": schema("send_email.input"), "create_draft": draftInput()} {
		s := readSendSchema(t, raw)
		if !s.Properties.Attachments.XFile {
			t.Errorf("%s: attachments lacks x-file: true", name)
		}
		obj := s.Properties.Attachments.Items.AnyOf[1].Properties
		if !obj["content"].XFile {
			t.Errorf("%s: attachment content lacks x-file: true", name)
		}
		for _, k := range attachmentFields.names {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s: attachment schema lacks %q, which the parser accepts", name, k)
			}
		}
		if len(obj) != len(attachmentFields.names) {
			t.Errorf("%s: attachment schema has %d fields, parser accepts %d", name, len(obj), len(attachmentFields.names))
		}
	}
}

// TestSchemasStateComposesLimits: every number a schema or description
// gives a model is the one the code enforces (compose's limits, Drive's
// page size, the uploads folder), so they cannot drift.
func TestSchemasStateComposesLimits(t *testing.T) {
	s := readSendSchema(t, schema("send_email.input"))
	a := s.Properties.Attachments
	if a.MaxItems != compose.MaxEntries {
		t.Errorf("attachments maxItems = %d; compose accepts %d entries", a.MaxItems, compose.MaxEntries)
	}
	// The limits are the whole call's (attachments, files, file_uris), so
	// the tool's description says them, once.
	limits := fmt.Sprintf("At most %d files and %d MiB in all", compose.MaxFiles, compose.MaxAttachmentBytes>>20)
	if !strings.Contains(sendEmailDescription, limits) || strings.Contains(a.Description, "MiB") {
		t.Errorf("send_email's description, not its attachments', should say %q:\n%s\n%s", limits, sendEmailDescription, a.Description)
	}
	if compose.MaxAttachmentBytes%(1<<20) != 0 || compose.MaxModelBytes%(1<<20) != 0 {
		t.Fatal("a limit is no whole number of MiB; say it otherwise")
	}
	text := a.Items.AnyOf[1].Properties["text"].Description
	if cap := fmt.Sprintf("text, base64 and content: at most %d MiB per call", compose.MaxModelBytes>>20); !strings.Contains(text, cap) {
		t.Errorf("text's description %q does not give the cap on model-written content: %q", text, cap)
	}
	// A chat client's files are files of the message: Gmail's count.
	if s.Properties.Files.MaxItems != compose.MaxFiles {
		t.Errorf("files maxItems = %d; a message takes %d files", s.Properties.Files.MaxItems, compose.MaxFiles)
	}
	if s.Properties.References.MaxItems != compose.MaxReferenceEntries {
		t.Errorf("references maxItems = %d; compose takes %d", s.Properties.References.MaxItems, compose.MaxReferenceEntries)
	}
	var search struct {
		Properties struct {
			PageSize struct {
				Maximum int `json:"maximum"`
			} `json:"page_size"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema("drive_search.input"), &search); err != nil {
		t.Fatal(err)
	}
	if p := search.Properties.PageSize; p.Maximum != drive.MaxPageSize {
		t.Errorf("drive_search page_size maximum %d; Drive takes %d", p.Maximum, drive.MaxPageSize)
	}
	var up struct {
		Properties struct {
			FolderID struct {
				Description string `json:"description"`
			} `json:"folder_id"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema("request_upload.input"), &up); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(up.Properties.FolderID.Description, strconv.Quote(upload.DefaultFolderName)) {
		t.Errorf("request_upload folder_id %q: want the uploads folder %q", up.Properties.FolderID.Description, upload.DefaultFolderName)
	}
}

// TestInputSchemasAcceptTheLenientForms makes sure a client that validates
// arguments against our schema lets through the forms it declares, and
// blocks unknown fields as the parser does. A lone string for a list
// (to, cc, attachments) is not declared, since a type list is not
// portable (TestSchemasArePortable), but the parser still reads it as a
// list of one, for the clients that pass a model's arguments on as they
// came (TestParseSendAccepts).
func TestInputSchemasAcceptTheLenientForms(t *testing.T) {
	send := compileSchema(t, "send_email input", schema("send_email.input"))
	search := compileSchema(t, "drive_search input", schema("drive_search.input"))
	cases := []struct {
		sch  *jsonschema.Schema
		args string
		ok   bool
	}{
		{send, `{"to":["a@example.com"],"subject":"s","body_text":"b"}`, true},
		{send, `{"to":["a@example.com","b@example.com"],"cc":["c@example.com"],"subject":"s","attachments":["1AbCdEfGhIjKlMnOpQrStUvWxYz012345"]}`, true},
		{send, `{"to":"a@example.com","subject":"s"}`, false},
		{send, `{"to":["a@example.com"],"subject":"s","attachments":["1AbC",{"file_id":"1AbC","as":".PDF"}]}`, true},
		// One object on its own reads (the parser takes it), but the schema
		// offers only a list: a free-form object branch confused
		// more than it helped.
		{send, `{"to":["a@example.com"],"subject":"s","attachments":{"file_id":"1AbC"}}`, false},
		{send, `{"to":["a@example.com"],"subject":"s","attachments":` + idList(compose.MaxEntries) + `}`, true},
		{send, `{"to":["a@example.com"],"subject":"s","attachments":` + idList(compose.MaxEntries+1) + `}`, false},
		{send, `{"to":["a@example.com"],"subject":"s","attachments":["1AbC",{"name":"n.csv","text":"a,b"},"{\"file_name\":\"x.txt\",\"mime_type\":\"text/plain\",\"base64\":\"eA==\"}"]}`, true},
		{send, `{"to":["a@example.com"],"subject":"s","attachment":"1AbC"}`, false},
		{send, `{"to":["a@example.com"],"subject":"s","attachments":[{"file_id":"1AbC","format":"pdf"}]}`, false},
		{send, `{"subject":"s"}`, false},
		{search, `{"query":"q3","page_size":100}`, true},
		{search, `{"query":"q3","page_size":101}`, false},
		{search, `{"query":"q3","page_size":0}`, false},
		{search, `{"q":"q3"}`, false},
	}
	for _, c := range cases {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(c.args))
		if err != nil {
			t.Fatal(err)
		}
		err = c.sch.Validate(v)
		if (err == nil) != c.ok {
			t.Errorf("%s: valid=%v, want %v (%v)", c.args, err == nil, c.ok, err)
		}
	}
}

// idList is a JSON list of n ids.
func idList(n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(`"1AbC",`, n), ",") + "]"
}
