package automation_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// The module may be used and pinned: it carries the Apache-2.0 license,
// and its changelog names the version its current state is to be tagged.
func TestLicenseAndChangelog(t *testing.T) {
	license, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(license), "Apache License") || !strings.Contains(string(license), "Version 2.0, January 2004") {
		t.Error("LICENSE is not the Apache License 2.0")
	}
	changelog, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^## v\d+\.\d+\.\d+ `).Match(changelog) {
		t.Error("CHANGELOG.md names no version")
	}
}
