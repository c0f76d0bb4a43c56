package browserproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SafeFlags returns the flags that go to every launch, Chromium and
// Electron alike. Each call returns a new slice, which the caller may
// append to or change.
func SafeFlags() []string {
	return []string{
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-extensions",
	}
}

// DefaultFlags returns the flags every Chromium launch gets: SafeFlags,
// then the ones that switch off background work that slows or
// destabilises automation and the browser's own network traffic. Each
// call returns a new slice. Package launch documents them as
// launch.DefaultFlags.
func DefaultFlags() []string { return append(SafeFlags(), chromiumFlags...) }

// chromiumFlags are what DefaultFlags adds to SafeFlags; only
// DefaultFlags reads it, and copies it.
var chromiumFlags = []string{
	// Closed network: the browser talks only to the pages it is sent to.
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-client-side-phishing-detection",
	"--disable-domain-reliability",
	"--safebrowsing-disable-auto-update",
	"--no-pings",
	"--metrics-recording-only",
	// Switched off by feature, not by the flags above: the secure-time
	// query at start, the form-field predictions a page with a form asks
	// the autofill service for, the optimization guide's hints and model
	// downloads, and translation.
	"--disable-features=NetworkTimeServiceQuerying,AutofillServerCommunication," +
		"OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,OptimizationTargetPrediction,Translate",
	// Components that ask for themselves on demand (the on-device model's
	// manifest does at every start, --disable-component-update
	// notwithstanding) ask an address no request can go to: port 0.
	"--component-updater=url-source=http://127.0.0.1:0/",
	// The accounts check (accounts.google.com/ListAccounts) a profile
	// makes at start, likewise.
	"--gaia-url=http://127.0.0.1:0/",
	// Stability.
	"--disable-background-timer-throttling",
	"--disable-backgrounding-occluded-windows",
	"--disable-renderer-backgrounding",
	"--disable-breakpad",
	"--disable-default-apps",
	"--disable-dev-shm-usage",
	"--disable-hang-monitor",
	"--disable-ipc-flooding-protection",
	"--disable-popup-blocking",
	"--disable-prompt-on-repost",
	"--password-store=basic",
	"--use-mock-keychain",
	"--force-color-profile=srgb",
}

// MergeFeatureLists returns args with every --disable-features= list
// joined into the first, and every --enable-features= list into its
// first: Chromium reads only the last of each, so a caller's own list
// after DefaultFlags would otherwise switch the defaults' off again.
func MergeFeatureLists(args []string) []string {
	out := make([]string, 0, len(args))
	first := map[string]int{}
	for _, a := range args {
		name, list, ok := strings.Cut(a, "=")
		if !ok || (name != "--disable-features" && name != "--enable-features") {
			out = append(out, a)
			continue
		}
		if i, seen := first[name]; seen {
			switch {
			case list == "":
			case strings.HasSuffix(out[i], "="):
				out[i] += list
			default:
				out[i] += "," + list
			}
			continue
		}
		first[name] = len(out)
		out = append(out, a)
	}
	return out
}

// SandboxArgs: Chromium and Electron refuse to start as root with their
// sandbox on.
func SandboxArgs() []string {
	if os.Geteuid() == 0 {
		return []string{"--no-sandbox"}
	}
	return nil
}

// Pipes are the two pipes of a debugging-pipe launch, named from the
// browser's side.
type Pipes struct {
	BrowserReads, BrowserWrites *os.File // the browser's ends
	ToBrowser, FromBrowser      *os.File // ours
}

// NewPipes makes the pair.
func NewPipes() (*Pipes, error) {
	r1, w1, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		r1.Close()
		w1.Close()
		return nil, err
	}
	return &Pipes{BrowserReads: r1, ToBrowser: w1, FromBrowser: r2, BrowserWrites: w2}, nil
}

// CloseBrowserEnds closes the browser's ends, which a started browser holds
// copies of: ours would keep the pipes open after it died, hiding its
// death from the reader. It is safe on a nil Pipes, as is CloseAll.
func (pp *Pipes) CloseBrowserEnds() {
	if pp != nil {
		pp.BrowserReads.Close()
		pp.BrowserWrites.Close()
	}
}

// CloseAll closes all four ends.
func (pp *Pipes) CloseAll() {
	if pp != nil {
		pp.CloseBrowserEnds()
		pp.ToBrowser.Close()
		pp.FromBrowser.Close()
	}
}

// ActivePort reads the two lines of DevToolsActivePort: the port, then the
// browser's WebSocket path (/devtools/browser/…).
func ActivePort(b []byte) (port int, path string, err error) {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 {
		return 0, "", fmt.Errorf("cdp: DevToolsActivePort: want 2 lines, got %d", len(lines))
	}
	p := strings.TrimSpace(lines[0])
	path = strings.TrimSpace(lines[1])
	if p == "" || len(p) > 5 || strings.Trim(p, "0123456789") != "" || !strings.HasPrefix(path, "/devtools/browser/") {
		return 0, "", fmt.Errorf("cdp: DevToolsActivePort: malformed content")
	}
	n, _ := strconv.Atoi(p)
	if n < 1 || n > 65535 {
		return 0, "", fmt.Errorf("cdp: DevToolsActivePort: port %s out of range", p)
	}
	return n, path, nil
}
