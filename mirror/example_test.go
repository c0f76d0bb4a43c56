package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tranquil/automation/mirror"
)

// A user declares where a script's reports go; the run's end (or an
// explicit sync) copies them there.
func ExampleStore_Sync() {
	root, _ := os.MkdirTemp("", "mirror-example")
	defer os.RemoveAll(root)
	root, _ = filepath.EvalSymlinks(root)
	script := filepath.Join(root, "scripts", "report.ts")
	out := filepath.Join(root, "scripts", "out")
	os.MkdirAll(out, 0o755)
	os.WriteFile(script, []byte("// @permissions write=out\n"), 0o644)
	os.WriteFile(filepath.Join(out, "summary.md"), []byte("# Summary\n"), 0o644)

	store, _ := mirror.OpenStore(filepath.Join(root, "data", mirror.FileName), mirror.Options{})
	ctx := context.Background()
	if _, err := store.Set(ctx, mirror.ScopeScript, script, filepath.Join(root, "Documents", "reports")); err != nil {
		fmt.Println(err)
		return
	}
	m, _, _ := store.Status(ctx, script)
	fmt.Println("before:", m.State.Outcome())

	res, err := store.Sync(ctx, mirror.Source{Script: script, ScriptDir: filepath.Dir(script), WriteRoots: []string{out}, Trigger: "sync"})
	fmt.Println("copied:", slashed(res.Copied), err)
	m, _, _ = store.Status(ctx, script)
	fmt.Println("after:", m.State.Outcome(), m.State.Copied)

	res, _ = store.Sync(ctx, mirror.Source{Script: script, ScriptDir: filepath.Dir(script), WriteRoots: []string{out}, Trigger: "sync"})
	fmt.Println("again:", res.Mirror.State.Outcome(), res.Unchanged, "unchanged")
	// Output:
	// before: never
	// copied: [out/summary.md] <nil>
	// after: copied 1
	// again: nothing 1 unchanged
}

// The guard refuses a destination that overlaps the script's own folder.
func ExampleStore_Set_refused() {
	root, _ := os.MkdirTemp("", "mirror-example")
	defer os.RemoveAll(root)
	root, _ = filepath.EvalSymlinks(root)
	script := filepath.Join(root, "scripts", "report.ts")
	os.MkdirAll(filepath.Dir(script), 0o755)
	os.WriteFile(script, []byte("// @permissions write=out\n"), 0o644)

	store, _ := mirror.OpenStore(filepath.Join(root, "data", mirror.FileName), mirror.Options{})
	_, err := store.Set(context.Background(), mirror.ScopeScript, script, filepath.Join(root, "scripts", "copies"))
	var refused *mirror.RefusedError
	fmt.Println(errors.Is(err, mirror.ErrRefused), errors.As(err, &refused) && refused.Inside)
	_, err = store.Set(context.Background(), mirror.ScopeScript, script, root)
	fmt.Println(errors.Is(err, mirror.ErrRefused), errors.As(err, &refused) && refused.Inside)
	// Output:
	// true true
	// true false
}

// slashed writes paths with forward slashes, so that the example's output
// is the same on Windows, whose relative paths use backslashes.
func slashed(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.ToSlash(p)
	}
	return out
}
