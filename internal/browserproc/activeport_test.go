package browserproc

import (
	"strings"
	"testing"
)

// FuzzActivePort feeds arbitrary DevToolsActivePort contents: the result
// is either an error or a port in range and a browser WebSocket path.
func FuzzActivePort(f *testing.F) {
	f.Add([]byte("9222\n/devtools/browser/1b2c\n"))
	f.Add([]byte("9222\r\n/devtools/browser/x"))
	f.Add([]byte("\n\n"))
	f.Add([]byte("12ab\n/devtools/browser/x"))
	f.Add([]byte("1\n/devtools/page/x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		port, path, err := ActivePort(data)
		if err != nil {
			return
		}
		if port < 1 || port > 65535 || !strings.HasPrefix(path, "/devtools/browser/") {
			t.Fatalf("port %d, path %q from %q", port, path, data)
		}
	})
}
