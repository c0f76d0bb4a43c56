// Package hosttest gives hosts test doubles of the interfaces they
// implement for the runner, so a host's own tests can run real scripts
// without its windows, clipboard or browser:
//
//   - [New] returns a [Host] of one double each; [Host.Runner] is the
//     runner.Host to configure.
//   - [UI] records notifications and opened files; [Clipboard] holds text;
//     [Workspace] names a project directory.
//   - [Tabs] keeps tabs in memory (open, close, focus, find, the active
//     tab); a run can list and open them, and a page action fails with
//     [ErrNoPage], since there is no page. Test page actions against a
//     real browser with package cdptabs.
//   - [Prompter] answers every consent request the same way and records
//     them.
//
// Every double is safe for concurrent use, as the runner calls a host from
// several goroutines. The runner itself, deno and the bridge stay real:
// these replace only what the host provides.
package hosttest
