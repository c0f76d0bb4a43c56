package runner_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// generatedFile is a file a program writes, from the module's root.
type generatedFile struct {
	path string
	// header: the format has comments, so the file starts with Go's
	// generated-code line; the others are said generated in GENERATED.md.
	header bool
	// stale is the test that fails when the file is stale, and dir the
	// directory of its package, from the root.
	stale, dir string
}

var generatedFiles = []generatedFile{
	{"runner/sdk/contract.json", false, "TestContractIsCurrent", "runner"},
	{"runner/sdk/contract_types.ts", true, "TestContractIsCurrent", "runner"},
	{"runner/sdk/tab_gen.ts", true, "TestContractIsCurrent", "runner"},
	{"runner/sdk/errors.ts", false, "TestSDKErrorCodesAreTheTable", "runner"}, // the union only
	{"runner/std.lock", false, "TestShippedStdLockMatchesThePins", "runner"},
	{"runner/sdk/rules.wasm.gz", false, "TestWasmIsFresh", "internal/ruleswasm/gen"},
	{"internal/ruleswasm/gen/sources_gen.go", true, "TestWasmIsFresh", "internal/ruleswasm/gen"},
}

// generatedHeader is the line Go's tools take for generated code.
var generatedHeader = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// Each generated file is marked as one (its first line, where its format
// has comments), listed in runner/GENERATED.md, and has a test that fails
// when it is stale; and every file that says it is generated is listed.
func TestGeneratedFilesAreMarked(t *testing.T) {
	root := ".."
	note, err := os.ReadFile("GENERATED.md")
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, f := range generatedFiles {
		listed[f.path] = true
		assert.Contains(t, string(note), "`"+f.path+"`", "GENERATED.md does not list %s", f.path)
		assert.Contains(t, string(note), "`"+f.stale+"`", "GENERATED.md does not name %s's test", f.path)
		assert.True(t, declaresTest(t, filepath.Join(root, f.dir), f.stale), "%s names %s, which %s does not declare", f.path, f.stale, f.dir)
		first, err := firstLine(filepath.Join(root, f.path))
		require.NoError(t, err)
		if f.header {
			assert.Regexp(t, generatedHeader, first, "%s: its first line is not the generated-code header", f.path)
		}
	}
	// A new generated file with a header joins the list.
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".go" && ext != ".ts" && ext != ".js" {
			return nil
		}
		first, err := firstLine(p)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		if generatedHeader.MatchString(first) {
			assert.True(t, listed[rel], "%s is generated: list it in runner/GENERATED.md and generatedFiles", rel)
		}
		return nil
	})
	require.NoError(t, err)
}

// firstLine is the first line of the file at p.
func firstLine(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	s.Scan()
	return s.Text(), s.Err()
}

// declaresTest reports whether a test file in dir declares func name.
func declaresTest(t *testing.T, dir, name string) bool {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	require.NoError(t, err)
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		if strings.Contains(string(src), "\nfunc "+name+"(t *testing.T) {") {
			return true
		}
	}
	return false
}
