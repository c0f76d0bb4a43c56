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
//
// To run a script against the real thing, [RunScript] (or [Run] in a Go
// test) launches a headless Chromium, serves a test's pages on 127.0.0.1
// and runs the script with the real run manager and deno, its header
// applied and its consent given by the test. Its [Result] holds the run's
// history entry (state, result, output, action log) and trace, and
// [Result.Explain] words them for a failing test. It catches what the
// fake browser of the SDK's testing module cannot: a target that picks the
// wrong element, a link whose JavaScript goes elsewhere. The SDK's
// runOnRealHost does the same from a deno test, through the example host.
//
// [Script.Sites] serves pages under web names such as example.com too,
// over https on 127.0.0.1 with a certificate only that run's browser
// trusts, so a script written for a real site runs unchanged and none
// of those names is looked up. [Script.During] drives a run while it runs: clicks its
// pane controls, stops it.
package hosttest
