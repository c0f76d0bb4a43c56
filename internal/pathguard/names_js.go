//go:build js

package pathguard

import (
	"strings"
	"syscall/js"

	"github.com/tranquil/automation/internal/ospath"
)

// Built for js/wasm (the testing kit's rules), names compare as on the
// system the kit runs on, which its loader's fs answers for: Windows
// paths without regard to case; elsewhere byte for byte, or without case
// where fs.caseSensitive says the volume ignores it (macOS).

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	if !strings.EqualFold(a, b) {
		return false
	}
	return ospath.Windows() || !askFS("caseSensitive", a).Equal(js.ValueOf(true))
}

// longName is the name on disk of the existing path p whose last component
// is name (a Windows 8.3 short name's long form), as the loader's
// fs.longName gives it; name when it gives none.
func longName(p, name string) string {
	if !ospath.Windows() {
		return name
	}
	if v := askFS("longName", p); v.Type() == js.TypeString && v.String() != "" {
		return v.String()
	}
	return name
}

// askFS calls the loader's fs.<f>(p), or answers true when it has none.
func askFS(f, p string) js.Value {
	fn := js.Global().Get("fs").Get(f)
	if fn.Type() != js.TypeFunction {
		return js.ValueOf(true)
	}
	return fn.Invoke(p)
}
