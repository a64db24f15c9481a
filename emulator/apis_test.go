package emulator_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	gdrive "google.golang.org/api/drive/v3"
	gm "google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"

	"github.com/drivemail/drivemail/emulator"
	"github.com/drivemail/drivemail/emulator/drivesvc"
	"github.com/drivemail/drivemail/emulator/emutest"
)

const ana = "ana@example.com"

// calls are one call of each emulated API through its real Go client,
// with a token that has every scope the call needs.
func calls(t *testing.T, e *emutest.Env) map[string]func() error {
	t.Helper()
	ctx := context.Background()
	hc := e.Client(ana, emutest.ScopeDriveReadonly, emutest.ScopeGmailSend, emutest.ScopeGmailReadonly)
	ds, err := gdrive.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, e.Endpoints.DriveOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := gm.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, e.Endpoints.GmailOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := sheets.NewService(ctx, append([]option.ClientOption{option.WithHTTPClient(hc)}, e.Endpoints.SheetsOptions()...)...)
	if err != nil {
		t.Fatal(err)
	}
	sheet := e.Put(ana, drivesvc.FileSpec{Name: "Budget", Kind: drivesvc.KindSheet})
	return map[string]func() error{
		"drive":  func() error { _, err := ds.Files.List().Do(); return err },
		"gmail":  func() error { _, err := gs.Users.Messages.List("me").Do(); return err },
		"sheets": func() error { _, err := ss.Spreadsheets.Get(sheet.ID).Do(); return err },
	}
}

// wantServiceDisabled checks err is Google's "API not enabled" answer
// for service, as Google sends it: 403, the legacy accessNotConfigured
// item, and the ErrorInfo, LocalizedMessage and Help details.
func wantServiceDisabled(t *testing.T, err error, service string) {
	t.Helper()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 403 {
		t.Fatalf("err = %v, want a 403 googleapi.Error", err)
	}
	if len(ge.Errors) != 1 || ge.Errors[0].Reason != "accessNotConfigured" {
		t.Errorf("errors = %+v, want one accessNotConfigured", ge.Errors)
	}
	if !strings.Contains(ge.Message, "has not been used in project") || !strings.Contains(ge.Message, service) {
		t.Errorf("message %q does not say the API is not enabled", ge.Message)
	}
	types := map[string]map[string]any{}
	for _, d := range ge.Details {
		m, _ := d.(map[string]any)
		typ, _ := m["@type"].(string)
		types[typ] = m
	}
	info := types["type.googleapis.com/google.rpc.ErrorInfo"]
	md, _ := info["metadata"].(map[string]any)
	if info["reason"] != "SERVICE_DISABLED" || info["domain"] != "googleapis.com" || md["service"] != service ||
		!strings.HasPrefix(md["consumer"].(string), "projects/") || !strings.Contains(md["activationUrl"].(string), service) {
		t.Errorf("ErrorInfo = %v, want SERVICE_DISABLED of %s with consumer and activationUrl", info, service)
	}
	if types["type.googleapis.com/google.rpc.LocalizedMessage"] == nil || types["type.googleapis.com/google.rpc.Help"] == nil {
		t.Errorf("details %v lack LocalizedMessage or Help", ge.Details)
	}
}

// TestAPIsCanBeTurnedOff: each API answers Google's SERVICE_DISABLED
// while turned off, only that API, and works again when turned on.
func TestAPIsCanBeTurnedOff(t *testing.T) {
	e := emutest.Start(t)
	call := calls(t, e)
	services := map[string]string{"drive": "drive.googleapis.com", "gmail": "gmail.googleapis.com", "sheets": "sheets.googleapis.com"}
	for api, service := range services {
		t.Run(api, func(t *testing.T) {
			if err := e.Emu.SetAPIEnabled(api, false); err != nil {
				t.Fatal(err)
			}
			wantServiceDisabled(t, call[api](), service)
			for other := range services {
				if other != api {
					if err := call[other](); err != nil {
						t.Errorf("%s with %s off: %v", other, api, err)
					}
				}
			}
			if err := e.Emu.SetAPIEnabled(api, true); err != nil {
				t.Fatal(err)
			}
			if err := call[api](); err != nil {
				t.Errorf("after turning %s on again: %v", api, err)
			}
		})
	}
	if err := e.Emu.SetAPIEnabled("calendar", false); err == nil {
		t.Error("an unknown API was accepted")
	}
}

// TestAPIsControlRoute: PUT /_emulator/apis/{api} turns an API off for a
// separately running emulator; a bad body or API name is a 4xx.
func TestAPIsControlRoute(t *testing.T) {
	e := emutest.Start(t)
	call := calls(t, e)
	put := func(api, body string) int {
		req, _ := http.NewRequest(http.MethodPut, e.URL+"/_emulator/apis/"+api, strings.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := put("sheets", `{"enabled": false}`); code != 200 {
		t.Fatalf("PUT sheets off: %d", code)
	}
	wantServiceDisabled(t, call["sheets"](), "sheets.googleapis.com")
	res, err := http.Get(e.URL + "/_emulator/apis")
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]bool
	_ = json.NewDecoder(res.Body).Decode(&state)
	res.Body.Close()
	if state["sheets"] || !state["drive"] || !state["gmail"] {
		t.Errorf("GET /_emulator/apis = %v, want only sheets off", state)
	}
	for _, bad := range []struct{ api, body string }{{"sheets", `{}`}, {"sheets", `nope`}, {"calendar", `{"enabled": false}`}} {
		if code := put(bad.api, bad.body); code < 400 || code > 499 {
			t.Errorf("PUT %s %s: %d, want a 4xx", bad.api, bad.body, code)
		}
	}
	if code := put("sheets", `{"enabled": true}`); code != 200 {
		t.Fatalf("PUT sheets on: %d", code)
	}
	if err := call["sheets"](); err != nil {
		t.Errorf("sheets back on: %v", err)
	}
}

// TestServiceDisabledFault: the fault form answers SERVICE_DISABLED the
// given number of times, for the API of its path only.
func TestServiceDisabledFault(t *testing.T) {
	e := emutest.Start(t)
	call := calls(t, e)
	e.Inject(emulator.Fault{PathPrefix: "/drive/v3/", ServiceDisabled: true, Times: 2})
	for range 2 {
		wantServiceDisabled(t, call["drive"](), "drive.googleapis.com")
	}
	if err := call["drive"](); err != nil {
		t.Errorf("after the faults: %v", err)
	}
	for _, bad := range []emulator.Fault{
		{PathPrefix: "/_nowhere/", ServiceDisabled: true},
		{PathPrefix: "/drive/v3/", ServiceDisabled: true, Status: 500},
	} {
		if err := e.Emu.InjectFault(bad); err == nil {
			t.Errorf("fault %+v was accepted", bad)
		}
	}
}

// TestCredentialErrorsCarryDetails: a missing token, a bad one and a
// missing scope are answered with Google's ErrorInfo reasons in details.
func TestCredentialErrorsCarryDetails(t *testing.T) {
	e := emutest.Start(t)
	e.Emu.AddUser(ana)
	get := func(token string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, e.URL+"/drive/v3/files", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var body struct {
			Error struct {
				Errors  []map[string]any `json:"errors"`
				Status  string           `json:"status"`
				Details []map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.NewDecoder(bytes.NewReader(b)).Decode(&body); err != nil || len(body.Error.Details) != 1 || len(body.Error.Errors) != 1 {
			t.Fatalf("body %s: want one errors item and one detail", b)
		}
		d := body.Error.Details[0]
		d["legacy"] = body.Error.Errors[0]["reason"]
		d["status"] = body.Error.Status
		return res.StatusCode, d
	}
	tests := []struct {
		name, token        string
		code               int
		reason, legacy, st string
	}{
		{"no token", "", 401, "CREDENTIALS_MISSING", "required", "UNAUTHENTICATED"},
		{"unknown token", "ya29.nothing", 401, "ACCESS_TOKEN_TYPE_UNSUPPORTED", "authError", "UNAUTHENTICATED"},
		{"no Drive scope", e.Token(ana, emutest.ScopeGmailSend), 403, "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "insufficientPermissions", "PERMISSION_DENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, d := get(tt.token)
			md, _ := d["metadata"].(map[string]any)
			if code != tt.code || d["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || d["reason"] != tt.reason ||
				md["service"] != "drive.googleapis.com" || d["legacy"] != tt.legacy || d["status"] != tt.st {
				t.Errorf("%d %v; want %d with ErrorInfo %s (errors[] %s, status %s) naming drive.googleapis.com", code, d, tt.code, tt.reason, tt.legacy, tt.st)
			}
		})
	}
}
