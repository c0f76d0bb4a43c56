package runner_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// updateCodes, set in the environment, makes TestSDKErrorCodesAreTheTable
// write the SDK's union instead of comparing it (go generate does).
const updateCodes = "TRANQUIL_UPDATE_CODES"

// sdkUnion is the SDK's TabErrorCode union, generated from the table.
var sdkUnion = regexp.MustCompile(`(?s)export type TabErrorCode =\n.*?;\n`)

func tsUnion() string {
	var b strings.Builder
	b.WriteString("export type TabErrorCode =\n")
	for _, c := range errcode.Codes() {
		b.WriteString(`  | "` + string(c) + "\"\n")
	}
	b.WriteString("  // deno-lint-ignore ban-types\n  | (string & {});\n")
	return b.String()
}

// The SDK's TabErrorCode union is generated from the one table (package
// errcode), in its order: a code added to the table and not to the SDK
// fails here until go generate ./runner writes it.
func TestSDKErrorCodesAreTheTable(t *testing.T) {
	path := filepath.Join("sdk", "errors.ts")
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Len(t, sdkUnion.FindAll(src, -1), 1, "errors.ts declares TabErrorCode once")
	want := sdkUnion.ReplaceAllLiteral(src, []byte(tsUnion()))
	if os.Getenv(updateCodes) != "" {
		require.NoError(t, os.WriteFile(path, want, 0o644))
		return
	}
	require.Equal(t, string(want), string(src), "run go generate ./runner after changing the code table")

	// And every code the form runtime (forms.js and the files spliced
	// into it) can answer with is in the table.
	files, err := filepath.Glob(filepath.Join("..", "cdp", "*.js"))
	require.NoError(t, err)
	require.Contains(t, files, filepath.Join("..", "cdp", "forms.js"))
	for _, f := range files {
		js, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`fail\("([a-z_]+)"`).FindAllSubmatch(js, -1) {
			require.NotEmpty(t, errcode.Code(m[1]).Meaning(), "%s answers with code %s, which the table lacks", filepath.Base(f), m[1])
		}
	}
}

// The union the test writes names every code once and nothing else, so
// the comparison above cannot pass with a code missing.
func TestSDKUnionNamesEveryCode(t *testing.T) {
	u := tsUnion()
	for _, c := range errcode.Codes() {
		require.Equal(t, 1, strings.Count(u, `"`+string(c)+`"`), c)
	}
	require.Equal(t, len(errcode.Codes()), strings.Count(u, "\n  | \""))
}
