package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite testdata/tools/*.json from the current tool definitions")

// TestSnapshots compares each tool as tools/list returns it with its
// snapshot, so any schema or description change is a visible diff.
// Rewrite them with: go test ./tools -run TestSnapshots -update
func TestSnapshots(t *testing.T) {
	h := newHarness(t, nil)
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(h.rpc("tools/list", map[string]any{}), &list); err != nil {
		t.Fatal(err)
	}
	want := []string{"create_draft", "drive_get_file", "drive_search", "request_upload", "send_email"}
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
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		path := filepath.Join(dir, head.Name+".json")
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run: go test ./tools -run TestSnapshots -update)", err)
		}
		if !bytes.Equal(got, pretty.Bytes()) {
			t.Errorf("%s differs from its snapshot %s; if the change is intended, run: go test ./tools -run TestSnapshots -update\ngot:\n%s", head.Name, path, pretty.String())
		}
	}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("tools/list lacks %s", n)
		}
	}
}

// TestDefinitions checks what a model and a client rely on in every tool:
// schemas compile, every hint is set, descriptions say how to proceed.
func TestDefinitions(t *testing.T) {
	for _, st := range Tools(Deps{}) {
		tool := st.Tool
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
	hintsOf := map[string][4]bool{} // readOnly, destructive, idempotent, openWorld
	for _, st := range Tools(Deps{}) {
		a := st.Tool.Annotations
		hintsOf[st.Tool.Name] = [4]bool{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint, *a.OpenWorldHint}
	}
	for name, want := range map[string][4]bool{
		"drive_search":   {true, false, true, true},
		"drive_get_file": {true, false, true, true},
		"send_email":     {false, false, false, true},
		"create_draft":   {false, false, false, true},
		"request_upload": {false, false, false, false},
	} {
		if hintsOf[name] != want {
			t.Errorf("%s hints = %v, want %v", name, hintsOf[name], want)
		}
	}
}

// TestDescriptionsTeachTheFlow reads the descriptions cold: each names the
// step a model needs next.
func TestDescriptionsTeachTheFlow(t *testing.T) {
	must := map[string][]string{
		"drive_search":   {"send_email", "page_token", "native", "as", "trash"},
		"drive_get_file": {"drive_search", "sheet"},
		"send_email":     {"drive_search", "link", "\"as\"", "cid:", "10 files", "25 MiB", "mcp-file://", "not idempotent"},
		"create_draft":   {"send_email", "draft_id"},
		"request_upload": {"curl", "mcp-file://", "send_email", "drive_search"},
	}
	for _, st := range Tools(Deps{}) {
		for _, w := range must[st.Tool.Name] {
			if !strings.Contains(st.Tool.Description, w) {
				t.Errorf("%s description does not mention %q", st.Tool.Name, w)
			}
		}
	}
}

// TestFileFieldsMarked checks the x-file markers chat middlewares look for.
func TestFileFieldsMarked(t *testing.T) {
	var s struct {
		Properties struct {
			Attachments struct {
				XFile bool `json:"x-file"`
				AnyOf []struct {
					Items struct {
						AnyOf []struct {
							Properties map[string]map[string]any `json:"properties"`
						} `json:"anyOf"`
					} `json:"items"`
				} `json:"anyOf"`
			} `json:"attachments"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema("send_email.input"), &s); err != nil {
		t.Fatal(err)
	}
	if !s.Properties.Attachments.XFile {
		t.Error("attachments lacks x-file: true")
	}
	obj := s.Properties.Attachments.AnyOf[0].Items.AnyOf[1].Properties
	if obj["content"]["x-file"] != true {
		t.Error("attachment content lacks x-file: true")
	}
	for _, k := range attachmentFields.names {
		if _, ok := obj[k]; !ok {
			t.Errorf("attachment schema lacks %q, which the parser accepts", k)
		}
	}
	if len(obj) != len(attachmentFields.names) {
		t.Errorf("attachment schema has %d fields, parser accepts %d", len(obj), len(attachmentFields.names))
	}
}

// TestModelWrittenFieldsNameTheCap: each field whose bytes the model
// writes (text, base64, content) says it counts toward the 1 MiB summed
// over the call, as compose counts it.
func TestModelWrittenFieldsNameTheCap(t *testing.T) {
	var s struct {
		Properties struct {
			Attachments struct {
				AnyOf []struct {
					Items struct {
						AnyOf []struct {
							Properties map[string]struct {
								Description string `json:"description"`
							} `json:"properties"`
						} `json:"anyOf"`
					} `json:"items"`
				} `json:"anyOf"`
			} `json:"attachments"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema("send_email.input"), &s); err != nil {
		t.Fatal(err)
	}
	obj := s.Properties.Attachments.AnyOf[0].Items.AnyOf[1].Properties
	for _, k := range []string{"text", "base64", "content"} {
		if d := obj[k].Description; !strings.Contains(d, "1 MiB") || !strings.Contains(d, "per call") {
			t.Errorf("%s's description %q does not say it counts toward the 1 MiB per call", k, d)
		}
	}
}

// TestInputSchemasAcceptTheLenientForms makes sure a client that validates
// arguments against our schema lets through every form we promise to
// accept, and blocks unknown fields as the parser does.
func TestInputSchemasAcceptTheLenientForms(t *testing.T) {
	send := compileSchema(t, "send_email input", schema("send_email.input"))
	search := compileSchema(t, "drive_search input", schema("drive_search.input"))
	cases := []struct {
		sch  *jsonschema.Schema
		args string
		ok   bool
	}{
		{send, `{"to":"a@example.com","subject":"s","body_text":"b"}`, true},
		{send, `{"to":["a@example.com","b@example.com"],"cc":"c@example.com","subject":"s","attachments":"1AbCdEfGhIjKlMnOpQrStUvWxYz012345"}`, true},
		{send, `{"to":"a@example.com","subject":"s","attachments":{"file_id":"1AbC","as":".PDF"}}`, true},
		{send, `{"to":"a@example.com","subject":"s","attachments":["1AbC",{"name":"n.csv","text":"a,b"},"{\"file_name\":\"x.txt\",\"mime_type\":\"text/plain\",\"base64\":\"eA==\"}"]}`, true},
		{send, `{"to":"a@example.com","subject":"s","attachment":"1AbC"}`, false},
		{send, `{"to":"a@example.com","subject":"s","attachments":[{"file_id":"1AbC","format":"pdf"}]}`, false},
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
