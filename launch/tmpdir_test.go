package launch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/internal/testenv"
)

// chromiumTemps lists what Chromium leaves in a TMPDIR.
func chromiumTemps(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "org.chromium.Chromium.") || strings.HasPrefix(e.Name(), "com.google.Chrome.") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestLaunchLeavesNothingInTMPDIR(t *testing.T) {
	// A profile too deep for a socket path keeps the host's TMPDIR; Close
	// removes what Chromium left there.
	deep := filepath.Join(tempRoot, strings.Repeat("d", 80))
	require.NoError(t, os.MkdirAll(deep, 0o700))
	t.Cleanup(func() { os.RemoveAll(deep) })
	for name, profiles := range map[string]string{"own TMPDIR": tempRoot, "profile too deep": deep} {
		t.Run(name, func(t *testing.T) {
			// Short, as a TMPDIR is: t.TempDir is too deep for the socket.
			tmp, err := os.MkdirTemp(tempRoot, "tmp")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(tmp) })
			t.Setenv("TMPDIR", tmp)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			p, err := Chromium(ctx, Options{Path: testenv.Chromium(t), TempDir: profiles})
			require.NoError(t, err)
			tab, err := p.Browser().NewTab(ctx, "about:blank")
			require.NoError(t, err)
			require.NoError(t, tab.Detach(ctx))
			link, err := os.Readlink(filepath.Join(p.DataDir(), "SingletonSocket"))
			require.NoError(t, err)
			if profiles == tempRoot {
				assert.True(t, strings.HasPrefix(link, p.DataDir()+string(filepath.Separator)), "singleton socket at %s", link)
			}
			require.NoError(t, p.Close())
			assert.Empty(t, chromiumTemps(t, tmp), "left in TMPDIR after launch and close")
			_, err = os.Stat(p.DataDir())
			assert.True(t, os.IsNotExist(err), "profile left: %v", err)
		})
	}
}

func TestSweepRemovesSingletonDirOfOrphanedProfile(t *testing.T) {
	tmp := t.TempDir()
	root := t.TempDir()
	// A profile from a dead host whose browser kept its socket in TMPDIR,
	// as launches did before each got its own.
	single := filepath.Join(tmp, "org.chromium.Chromium.AbC123")
	require.NoError(t, os.Mkdir(single, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(single, "SingletonSocket"), nil, 0o600))
	profile := filepath.Join(root, profilePrefix+"orphan")
	require.NoError(t, os.Mkdir(profile, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(profile, ownerFile), []byte("host=999999999\nbrowser=999999998\n"), 0o600))
	require.NoError(t, os.Symlink(filepath.Join(single, "SingletonSocket"), filepath.Join(profile, "SingletonSocket")))
	// Another directory in TMPDIR that no swept profile names stays.
	other := filepath.Join(tmp, "org.chromium.Chromium.Other1")
	require.NoError(t, os.Mkdir(other, 0o700))

	removed, err := (&Launcher{opts: LauncherOptions{TempDir: root}}).Sweep()
	require.NoError(t, err)
	assert.Equal(t, []string{profile}, removed)
	assert.Equal(t, []string{"org.chromium.Chromium.Other1"}, chromiumTemps(t, tmp))
}
