// Package display makes text a script controls safe to show to the user.
//
//   - [Line] escapes everything that is not visible text, for one line.
//   - [Text] does the same but keeps line feeds and tabs.
//   - [Shorten] cuts text to a number of characters for a message.
//
// A script chooses much of what a host shows: its file name (and the
// names of the folders above it), its notifications, output, log lines,
// pane-control names, results and error messages. Printed raw, terminal
// escape sequences in them can recolour, move the cursor, clear the
// screen or rewrite what the user reads, including the consent prompt;
// bidi overrides can make a path or a grant read backwards. Run every
// such string through Line (or Text, for output that spans lines) before
// showing it. The escapes are Go's (\x1b, \u202e), so nothing is hidden:
// the user sees that the text held a control character, and where.
//
// The library's own wording is already safe: permissions.Description.Text
// passes the paths it holds through Line.
package display
