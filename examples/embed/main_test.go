package embed_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tranquil/automation/internal/testenv"
)

// TestMain points the example at this machine's deno, Chromium and deno
// module cache, and fails with the install command when one is missing.
func TestMain(m *testing.M) {
	for env, look := range map[string]func() (string, error){"TRANQUIL_DENO": testenv.LookDeno, "TRANQUIL_CHROMIUM": testenv.LookChromium} {
		if os.Getenv(env) != "" {
			continue
		}
		p, err := look()
		if err != nil {
			fmt.Fprintf(os.Stderr, "the example needs deno and chromium: %v\ninstall them with: %s\n", err, testenv.DenoInstall)
			os.Exit(1)
		}
		os.Setenv(env, p)
	}
	if os.Getenv("DENO_DIR") == "" {
		if base, err := os.UserCacheDir(); err == nil {
			os.Setenv("DENO_DIR", filepath.Join(base, "deno"))
		}
	}
	os.Exit(m.Run())
}
