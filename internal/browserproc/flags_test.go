package browserproc_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tranquil/automation/internal/browserproc"
)

// A caller's own feature lists join the defaults' instead of replacing
// them (Chromium reads only the last --disable-features).
func TestMergeFeatureLists(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"--a", "--disable-features=X", "--b"}, []string{"--a", "--disable-features=X", "--b"}},
		{[]string{"--disable-features=X", "--b", "--disable-features=Y,Z"}, []string{"--disable-features=X,Y,Z", "--b"}},
		{[]string{"--disable-features=", "--disable-features=Y"}, []string{"--disable-features=Y"}},
		{[]string{"--disable-features=X", "--disable-features="}, []string{"--disable-features=X"}},
		{[]string{"--enable-features=A", "--disable-features=X", "--enable-features=B"}, []string{"--enable-features=A,B", "--disable-features=X"}},
		{[]string{"--disable-features-extra=1", "--disable-features"}, []string{"--disable-features-extra=1", "--disable-features"}},
	} {
		if got := browserproc.MergeFeatureLists(c.in); !slices.Equal(got, c.want) {
			t.Errorf("MergeFeatureLists(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if !slices.ContainsFunc(browserproc.DefaultFlags(), func(f string) bool {
		return strings.HasPrefix(f, "--disable-features=NetworkTimeServiceQuerying,")
	}) {
		t.Error("the defaults no longer switch the time query off")
	}
}

// The profile's preferences are JSON Chromium reads, with the probe and
// prediction off.
func TestWriteProfilePrefs(t *testing.T) {
	dir := t.TempDir()
	if err := browserproc.WriteProfilePrefs(dir); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "Default", "Preferences"))
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		AlternateErrorPages struct{ Enabled *bool } `json:"alternate_error_pages"`
		Net                 struct {
			Prediction int `json:"network_prediction_options"`
		} `json:"net"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if p.AlternateErrorPages.Enabled == nil || *p.AlternateErrorPages.Enabled || p.Net.Prediction != 2 {
		t.Errorf("preferences %s", raw)
	}
}
