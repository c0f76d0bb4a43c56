package runner

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
)

// sdkFS is the TypeScript SDK every run imports: the bootstrap (main.ts),
// tranquil/automation (mod.ts), tranquil/automation/testing (testing.ts),
// their modules, the deno.json import map, the guide and the host's method
// list (contract.json), which the testing kit serves. The SDK's own tests
// (*_test.ts, test_helpers.ts) stay in the source tree, which is where
// they run; TestSDKEmbedsOnlyWhatRunsNeed keeps this list and the
// directory in step. rules.wasm.gz, the kit's rules (Go's,
// compiled to WebAssembly), is rebuilt by `go generate
// ./internal/ruleswasm/gen`.
//
//go:embed sdk/deno.json sdk/writing-automations.md sdk/cache_probe.ts
//go:embed sdk/main.ts sdk/mod.ts sdk/runtime.ts sdk/transport.ts sdk/version.ts
//go:embed sdk/browser.ts sdk/contract_types.ts sdk/tab_gen.ts sdk/errors.ts sdk/path.ts sdk/step.ts
//go:embed sdk/contract.json sdk/testing.ts sdk/fake_browser.ts sdk/served.ts sdk/kit_rules.ts sdk/go_wasm.ts sdk/rules.wasm.gz sdk/realhost.ts
var sdkFS embed.FS

// SDKVersion is the version of the embedded SDK. The bootstrap sends it in
// its AUTH frame; a test keeps it equal to sdk/version.ts.
const SDKVersion = "0.1.0"

// SDKPaths are the materialised files of one SDK build.
type SDKPaths struct {
	// Dir is <root>/sdk-<first 16 hex digits of the SHA-256 of the
	// embedded files>; it changes whenever any file of the SDK does.
	Dir string
	// Bootstrap is Dir/main.ts, the module deno runs.
	Bootstrap string
	// Config is Dir/deno.json, passed to deno with --config.
	Config string
}

// sdkFile is one embedded file, its path relative to the SDK root in slash
// form.
type sdkFile struct {
	name string
	data []byte
}

// sdkFiles lists the embedded SDK in a fixed order.
func sdkFiles() ([]sdkFile, error) {
	var files []sdkFile
	err := fs.WalkDir(sdkFS, "sdk", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := sdkFS.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, sdkFile{name: p[len("sdk/"):], data: data})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, err
}

// sdkHash identifies the SDK's content: every name and body, each
// length-prefixed, so no two different file sets hash alike.
func sdkHash(files []sdkFile) string {
	h := sha256.New()
	var n [8]byte
	for _, f := range files {
		binary.BigEndian.PutUint64(n[:], uint64(len(f.name)))
		h.Write(n[:])
		h.Write([]byte(f.name))
		binary.BigEndian.PutUint64(n[:], uint64(len(f.data)))
		h.Write(n[:])
		h.Write(f.data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// MaterializeSDK writes the embedded SDK to <root>/sdk-<hash> and returns
// its paths. It is idempotent: when the directory already holds exactly the
// embedded files it writes nothing. A fresh copy is written to a temporary
// directory beside it and renamed into place, so a reader (or a concurrent
// MaterializeSDK in another process) never sees a partial SDK. A directory
// whose content was changed is replaced. Files get mode 0644, directories
// 0755. Older SDK directories under root are left alone.
func MaterializeSDK(root string) (SDKPaths, error) {
	files, err := sdkFiles()
	if err != nil {
		return SDKPaths{}, fmt.Errorf("runner: read embedded sdk: %w", err)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return SDKPaths{}, fmt.Errorf("runner: sdk root: %w", err)
	}
	dir := filepath.Join(root, "sdk-"+sdkHash(files))
	paths := SDKPaths{Dir: dir, Bootstrap: filepath.Join(dir, "main.ts"), Config: filepath.Join(dir, "deno.json")}
	if sdkIntact(dir, files) {
		return paths, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return SDKPaths{}, fmt.Errorf("runner: materialise sdk: %w", err)
	}
	tmp, err := os.MkdirTemp(root, ".sdk-tmp-")
	if err != nil {
		return SDKPaths{}, fmt.Errorf("runner: materialise sdk: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := writeSDK(tmp, files); err != nil {
		return SDKPaths{}, fmt.Errorf("runner: materialise sdk: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process may have won the race with the same content.
		if sdkIntact(dir, files) {
			return paths, nil
		}
		if _, statErr := os.Stat(dir); statErr != nil {
			return SDKPaths{}, fmt.Errorf("runner: materialise sdk: %w", err)
		}
		// dir exists with the wrong content: move it aside, then retry.
		old, err := os.MkdirTemp(root, ".sdk-old-")
		if err != nil {
			return SDKPaths{}, fmt.Errorf("runner: materialise sdk: %w", err)
		}
		defer os.RemoveAll(old)
		if err := os.Rename(dir, filepath.Join(old, "sdk")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return SDKPaths{}, fmt.Errorf("runner: replace damaged sdk: %w", err)
		}
		if err := os.Rename(tmp, dir); err != nil && !sdkIntact(dir, files) {
			return SDKPaths{}, fmt.Errorf("runner: materialise sdk: %w", err)
		}
	}
	return paths, nil
}

// writeSDK writes files under dir with fixed modes, each synced to disk
// before the directory is renamed into place.
func writeSDK(dir string, files []sdkFile) error {
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		if sub := path.Dir(f.name); sub != "." {
			if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(sub)), 0o755); err != nil {
				return err
			}
		}
		if err := writeSynced(p, f.data); err != nil {
			return err
		}
	}
	return nil
}

func writeSynced(p string, data []byte) error {
	fh, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = fh.Write(data)
	if err == nil {
		err = fh.Chmod(0o644) // exact, whatever the umask
	}
	if err == nil {
		err = fh.Sync()
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}

// sdkIntact reports whether dir holds exactly files: no file missing,
// changed or added.
func sdkIntact(dir string, files []sdkFile) bool {
	want := make(map[string][]byte, len(files))
	for _, f := range files {
		want[f.name] = f.data
	}
	seen := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, ok := want[filepath.ToSlash(rel)]
		if !ok || !d.Type().IsRegular() {
			return errSDKMismatch
		}
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, data) {
			return errSDKMismatch
		}
		seen++
		return nil
	})
	return err == nil && seen == len(files)
}

var errSDKMismatch = errors.New("sdk content differs")
