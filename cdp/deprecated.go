package cdp

import "github.com/tranquil/automation/internal/browserproc"

// DefaultFlags are the flags every Chromium launch gets.
//
// Deprecated: launching moved to package launch: use launch.DefaultFlags,
// the same slice. This name stays only until its last caller moves.
var DefaultFlags = browserproc.DefaultFlags
