package runner_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
)

// The SDK's TabErrorCode union names exactly the codes of the one table in
// package cdp, so a code added on one side and not the other fails here.
func TestSDKErrorCodesAreTheTable(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("sdk", "errors.ts"))
	require.NoError(t, err)
	body := regexp.MustCompile(`(?s)export type TabErrorCode =(.*?);`).FindSubmatch(src)
	require.NotNil(t, body, "errors.ts declares TabErrorCode")
	var sdk []string
	for _, m := range regexp.MustCompile(`\|\s*"([a-z_]+)"`).FindAllSubmatch(body[1], -1) {
		sdk = append(sdk, string(m[1]))
	}
	var table []string
	for _, c := range cdp.Codes() {
		table = append(table, c.Code)
	}
	slices.Sort(sdk)
	slices.Sort(table)
	require.Equal(t, table, sdk)

	// And every code the form runtime can answer with is in the table.
	js, err := os.ReadFile(filepath.Join("..", "cdp", "forms.js"))
	require.NoError(t, err)
	for _, m := range regexp.MustCompile(`fail\("([a-z_]+)"`).FindAllSubmatch(js, -1) {
		require.Contains(t, table, string(m[1]), "forms.js answers with a code the table lacks")
	}
}
