package emulator_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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
