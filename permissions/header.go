package permissions

import (
	"slices"
	"time"
)

// Timeout bounds. A declared @timeout outside them is refused; use
// "@timeout none" for a script that runs until stopped.
const (
	DefaultTimeout = 10 * time.Minute
	MinTimeout     = time.Second
	MaxTimeout     = 24 * time.Hour
)

// Header is a script's validated declaration. Slices are sorted and free of
// duplicates; a key given twice merges. The zero value declares nothing and is
// not a valid parse result: Parse always sets either None or some grant.
type Header struct {
	// None is the explicit "nothing beyond the sandbox" declaration.
	None bool

	Browser   bool // browser: see and control tabs
	Clipboard bool // clipboard: read and write the clipboard
	Forms     bool // forms: fill in forms in tabs
	PageJS    bool // page-js: run code inside pages

	// Sites scopes what the script does in tabs (reading pages, forms,
	// page code) to these hosts ("*.example.com" covers every subdomain but
	// not example.com itself; list both for both), each optionally with a
	// port ("localhost:8080"). Empty means any site. It is also the only
	// grant that lets the run's tabs load a page on this computer or the
	// local network: an entry naming that host exactly, not a wildcard.
	Sites []string
	// Net and Import hold host, host:port, IPv4, bracketed IPv6 (with or
	// without :port) and *.domain entries in canonical lower-case form.
	Net    []string
	Import []string
	// Run holds command names or absolute paths.
	Run []string
	// Env holds variable names, each optionally ending in "*".
	Env []string
	// Read and Write hold path grants resolved against the script's
	// directory.
	Read  []Path
	Write []Path

	// Timeout is how long a run may last: DefaultTimeout unless declared,
	// and 0 when NoTimeout is set.
	Timeout time.Duration
	// NoTimeout is "@timeout none": the run lasts until it ends or is stopped.
	NoTimeout bool
	// TimeoutDeclared reports whether the header had an @timeout line.
	TimeoutDeclared bool

	// ScriptPath is the script's absolute path as given to Parse; ScriptDir
	// is the real (symlink-resolved) directory holding it, which relative
	// grants are resolved against.
	ScriptPath string
	ScriptDir  string
}

// PathKind says what a granted path was when the header was parsed.
type PathKind int

const (
	// Missing: nothing exists there yet. Deno grants are recursive, so a
	// missing path may become a folder and cover everything created inside.
	Missing PathKind = iota
	File
	Dir
)

func (k PathKind) String() string {
	switch k {
	case File:
		return "file"
	case Dir:
		return "directory"
	default:
		return "missing"
	}
}

// Path is one read or write grant.
type Path struct {
	Declared string   // as written in the header
	Lexical  string   // absolute and cleaned, before symlinks
	Resolved string   // real path: what deno is granted and the user is shown
	Kind     PathKind // what exists at Resolved
}

// Capability names a host API a run may receive over RPC.
type Capability string

// Host capabilities. Every run gets the first four.
const (
	CapUI           Capability = "ui"
	CapConfig       Capability = "config"
	CapContext      Capability = "context"
	CapPaneControls Capability = "paneControls"
	CapTabs         Capability = "tabs"
	CapTab          Capability = "tab"
	CapWorkspace    Capability = "workspace"
	CapForms        Capability = "forms"
	CapPageJS       Capability = "pageJs"
	CapClipboard    Capability = "clipboard"
)

// Capabilities returns the host capabilities a run with this header gets,
// sorted. It is the single place that maps header keys to capabilities; the
// bridge and the runner both use it.
func (h *Header) Capabilities() []Capability {
	caps := []Capability{CapUI, CapConfig, CapContext, CapPaneControls}
	if h.Browser {
		caps = append(caps, CapTabs, CapTab, CapWorkspace)
	}
	if h.Forms {
		caps = append(caps, CapForms, CapTabs, CapTab)
	}
	if h.PageJS {
		caps = append(caps, CapPageJS, CapTabs, CapTab)
	}
	if h.Clipboard {
		caps = append(caps, CapClipboard)
	}
	slices.Sort(caps)
	return slices.Compact(caps)
}

// Has reports whether the run gets capability c.
func (h *Header) Has(c Capability) bool {
	_, found := slices.BinarySearch(h.Capabilities(), c)
	return found
}
