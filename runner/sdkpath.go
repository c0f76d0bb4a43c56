package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tranquil/automation/internal/atomicfile"
)

// CurrentSDK is the stable face of the SDK, for editors and people:
// <DataDir>/sdk/current, whose paths stay the same from one SDK build to
// the next while the content-hashed build directories come and go.
type CurrentSDK struct {
	// Dir is <DataDir>/sdk/current.
	Dir string
	// Config is Dir/deno.json: the SDK's import map, pointing into the
	// newest published build. Point an editor's Deno extension at it
	// ("deno.config"), or pass it to deno check and deno test.
	Config string
	// Guide is Dir/writing-automations.md, the guide to writing a script.
	Guide string
}

// CurrentSDKPaths returns the stable paths for a manager's DataDir. It
// writes nothing; [Manager.CurrentSDK] or [PublishSDK] fills them in.
func CurrentSDKPaths(dataDir string) CurrentSDK {
	dir := filepath.Join(dataDir, "sdk", "current")
	return CurrentSDK{Dir: dir, Config: filepath.Join(dir, "deno.json"), Guide: filepath.Join(dir, "writing-automations.md")}
}

// CurrentSDK materialises the SDK as [Manager.Prepare] does and publishes
// it at the stable paths, so an editor configured once keeps working
// across upgrades of the library.
func (m *Manager) CurrentSDK(ctx context.Context) (CurrentSDK, error) {
	paths, err := m.prepare(ctx)
	if err != nil {
		return CurrentSDK{}, err
	}
	return PublishSDK(paths)
}

// PublishSDK makes <root>/current, beside the build in paths (whose Dir is
// <root>/sdk-<hash>), describe that build: a deno.json whose import map
// points into it and a copy of its guide. Each file is replaced
// atomically, and only when it differs, so publishing an unchanged build
// writes nothing and a reader never sees half a file. Between two builds
// published at once, the last one wins.
func PublishSDK(paths SDKPaths) (CurrentSDK, error) {
	root := filepath.Dir(paths.Dir)
	cur := CurrentSDK{Dir: filepath.Join(root, "current")}
	cur.Config = filepath.Join(cur.Dir, "deno.json")
	cur.Guide = filepath.Join(cur.Dir, "writing-automations.md")
	config, err := currentConfig(paths)
	if err != nil {
		return CurrentSDK{}, fmt.Errorf("runner: publish sdk: %w", err)
	}
	guide, err := os.ReadFile(filepath.Join(paths.Dir, "writing-automations.md"))
	if err != nil {
		return CurrentSDK{}, fmt.Errorf("runner: publish sdk: %w", err)
	}
	if err := os.MkdirAll(cur.Dir, 0o755); err != nil {
		return CurrentSDK{}, fmt.Errorf("runner: publish sdk: %w", err)
	}
	for p, data := range map[string][]byte{cur.Config: config, cur.Guide: guide} {
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := atomicfile.WriteFile(p, data, 0o644); err != nil {
			return CurrentSDK{}, fmt.Errorf("runner: publish sdk: %w", err)
		}
	}
	return cur, nil
}

// currentConfig is the build's deno.json with every import into the build
// ("./mod.ts") rewritten to reach it from the current directory
// ("../sdk-<hash>/mod.ts"); deno resolves an import map's relative
// entries against the file that holds it.
func currentConfig(paths SDKPaths) ([]byte, error) {
	data, err := os.ReadFile(paths.Config)
	if err != nil {
		return nil, err
	}
	var config map[string]any
	if err := json.Unmarshal(data, &config); err != nil {
		return nil, fmt.Errorf("sdk deno.json: %w", err)
	}
	imports, _ := config["imports"].(map[string]any)
	build := "../" + filepath.Base(paths.Dir) + "/"
	for k, v := range imports {
		if s, ok := v.(string); ok && strings.HasPrefix(s, "./") {
			imports[k] = build + path.Clean(s)
		}
	}
	out, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
