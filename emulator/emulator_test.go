package emulator_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drivemail/drivemail/emulator"
)

func TestRequestCountersStayBounded(t *testing.T) {
	emu, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	for i := range 50 {
		for _, method := range []string{fmt.Sprintf("M%d", i), http.MethodGet} {
			req, _ := http.NewRequest(method, srv.URL+fmt.Sprintf("/nowhere/%d", i), nil)
			res, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
	}
	st := emu.Stats()
	if st.Requests != 100 || len(st.Paths) != 2 || st.Paths["GET (unrouted)"] != 50 || st.Paths["OTHER (unrouted)"] != 50 {
		t.Errorf("%d requests counted under %v; want 100 under GET and OTHER (unrouted)", st.Requests, st.Paths)
	}
}

// TestPickerProjectConfig: the Picker's App ID and API key default to
// the demo project's; a number that is not digits, or a key with spaces,
// is refused at New.
func TestPickerProjectConfig(t *testing.T) {
	emu, err := emulator.New(emulator.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	if emu.ProjectNumber() != emulator.DemoProjectNumber || emu.APIKey() != emulator.DemoAPIKey {
		t.Errorf("defaults %q %q", emu.ProjectNumber(), emu.APIKey())
	}
	for _, cfg := range []emulator.Config{{ProjectNumber: "12ab"}, {ProjectNumber: strings.Repeat("1", 21)}, {APIKey: "a key"}} {
		if e, err := emulator.New(cfg); err == nil {
			_ = e.Close()
			t.Errorf("%+v accepted", cfg)
		}
	}
	if e, err := emulator.New(emulator.Config{ProjectNumber: strings.Repeat("9", 20), APIKey: "AIzaSyOther"}); err != nil || e.ProjectNumber() != strings.Repeat("9", 20) {
		t.Errorf("a 20-digit number: %v", err)
	} else {
		_ = e.Close()
	}
}
