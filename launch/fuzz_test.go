package launch

import (
	"strings"
	"testing"
)

// FuzzParseDesktop feeds arbitrary desktop files: parsing never panics, an
// accepted entry has a name and a command, and its Exec either splits into
// arguments free of field codes or is refused.
func FuzzParseDesktop(f *testing.F) {
	f.Add([]byte("[Desktop Entry]\nType=Application\nName=Slack\nExec=/usr/lib/slack/slack %U\n"))
	f.Add([]byte("[Desktop Entry]\nName=A\\sB\nExec=\"/opt/My App/app\" --x \"a \\\"q\\\"\" 100%%\n[Desktop Action x]\nExec=y\n"))
	f.Add([]byte("[Desktop Entry]\nName=x\nExec=env A=1 app %F\nNoDisplay=true\n"))
	f.Add([]byte("[Desktop Entry\nName=x\n"))
	f.Add([]byte("[Desktop Entry]\n[Desktop Entry]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		de, err := parseDesktop(data)
		if err != nil {
			return
		}
		if de.Name == "" || de.Exec == "" {
			t.Fatalf("accepted entry without Name or Exec: %+v", de)
		}
		argv, err := splitExec(de.Exec)
		if err != nil {
			return
		}
		for _, a := range argv {
			if a == "" && !strings.Contains(de.Exec, `""`) {
				t.Fatalf("empty argument from %q", de.Exec)
			}
		}
		_ = programOf(argv)
	})
}

// FuzzParsePlist feeds arbitrary Info.plist contents: no panic, and values
// come only from the top-level dictionary's strings, bounded in size.
func FuzzParsePlist(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0"?><plist version="1.0"><dict><key>CFBundleExecutable</key><string>Slack</string><key>CFBundleIdentifier</key><string>com.tinyspeck.slackmacgap</string></dict></plist>`))
	f.Add([]byte(`<plist><dict><key>A</key><dict><key>CFBundleExecutable</key><string>nested</string></dict><key>B</key><true/></dict></plist>`))
	f.Add([]byte(`<plist><array><string>x</string></array></plist>`))
	f.Add([]byte("bplist00\x00"))
	f.Add([]byte(`<plist><dict><key>A</key><string>unterminated`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parsePlist(data)
		if err != nil {
			return
		}
		for k, v := range m {
			if len(v) > 4096+len(data) {
				t.Fatalf("value of %q is %d bytes", k, len(v))
			}
			if !strings.Contains(string(data), k) && !strings.Contains(string(data), "&") {
				t.Fatalf("key %q not in input", k)
			}
		}
	})
}

// FuzzParseOwner feeds arbitrary owner files: an accepted one always names
// a host pid, which Sweep relies on.
func FuzzParseOwner(f *testing.F) {
	f.Add([]byte("host=12\nbrowser=34\n"))
	f.Add([]byte("host=1\n"))
	f.Add([]byte("browser=3\n"))
	f.Add([]byte("host=-1\nbrowser=x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		host, browser, ok := parseOwner(data)
		if ok && (host <= 0 || browser < 0) {
			t.Fatalf("accepted host=%d browser=%d from %q", host, browser, data)
		}
	})
}
