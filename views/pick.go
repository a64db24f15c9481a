package views

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// pickView is the pick view: drive_pick's link to Google's Picker, opened
// by the host (ui/open-link), the way that works wherever links open.
func pickView(cfg Config) (View, error) {
	return View{}, fmt.Errorf("views: the pick view is not built yet")
}

// dataScript declares the values a view's script reads, as one constant
// of JSON literals (which escape <, > and &, so no value can end the
// script element).
func dataScript(data map[string]string) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("const VIEW_DATA = {")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(data[k])
		b.Write(kj)
		b.WriteString(": ")
		b.Write(vj)
	}
	b.WriteString("};\n")
	return b.String()
}
