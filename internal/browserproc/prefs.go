package browserproc

import (
	"fmt"
	"os"
	"path/filepath"
)

// profilePrefs is what a fresh profile's Default/Preferences holds:
//   - alternate_error_pages off: otherwise the error page of a name that
//     does not resolve starts a DNS probe, which asks the system resolver
//     and public DNS servers (8.8.8.8, 8.8.4.4) about a name of its own;
//   - network prediction never (2): no DNS prefetch or preconnect for the
//     links a page shows, so the browser looks up only what it loads.
//
// Not stopped here: the first text typed into a field fetches a
// spell-check dictionary (redirector.gvt1.com/edgedl/chrome/dict/…) even
// with spell checking switched off in the preferences.
const profilePrefs = `{"alternate_error_pages":{"enabled":false},"net":{"network_prediction_options":2}}`

// WriteProfilePrefs writes the preferences that keep a fresh profile off
// the network beyond the pages it is sent to (see profilePrefs) into
// dataDir, the --user-data-dir of a browser not yet started. Chromium
// reads them at start; an Electron app keeps its own and ignores them.
func WriteProfilePrefs(dataDir string) error {
	dir := filepath.Join(dataDir, "Default")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("browserproc: profile preferences: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Preferences"), []byte(profilePrefs), 0o600); err != nil {
		return fmt.Errorf("browserproc: profile preferences: %w", err)
	}
	return nil
}
