package runner

import "context"

// RunInfo identifies the run a host call comes from.
type RunInfo struct {
	ID     string
	Script string // absolute path of the script (the source file for a selection)
}

// Level is a notification's severity.
type Level string

const (
	LevelInfo    Level = "info"
	LevelSuccess Level = "success"
	LevelWarning Level = "warning"
	LevelError   Level = "error"
)

// OpenOptions says how UI.Open shows a file.
type OpenOptions struct {
	Split string // "", "left", "right", "up" or "down"
}

// UI is the host's user interface. Notify also receives the runner's own
// notice of a run that failed.
type UI interface {
	Notify(ctx context.Context, run RunInfo, message string, level Level) error
	Open(ctx context.Context, run RunInfo, path string, opts OpenOptions) error
}

// Clipboard is the host's clipboard.
type Clipboard interface {
	Read(ctx context.Context, run RunInfo) (string, error)
	Write(ctx context.Context, run RunInfo, text string) error
}

// Workspace describes the host's open project.
type Workspace interface {
	ProjectDir(ctx context.Context, run RunInfo) (string, error)
}

// Host bundles the host's implementations. A nil member makes its
// capability fail with a clear error rather than vanish, so a script that
// was granted it learns why it does not work.
type Host struct {
	UI        UI
	Clipboard Clipboard
	Workspace Workspace
}
