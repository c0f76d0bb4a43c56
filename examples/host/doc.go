// Host is the library's embedded default host: a small, real program that
// runs automation scripts against a Chromium it launches itself, asks for
// consent on the terminal and keeps its files under a data directory.
//
// Usage:
//
//	host run [flags] SCRIPT        run a script (see the flags below)
//	host plan [--json] SCRIPT      show what a script would get, without running it
//	host history [--json] [-n N]   list recent runs, newest first
//	host show [--json] RUN_ID      show one run in full (a unique prefix of the ID will do)
//	host approvals [--json]        list the scripts the user approved
//	host revoke SCRIPT             withdraw a script's approval
//	host doctor [--json]           check deno, Chromium, the data dir and the SDK cache
//
// Every subcommand takes --data DIR, the data directory (default: the user
// config directory's tranquil-automation folder). It holds the SDK, deno's
// module cache (unless DENO_DIR is set), the run history and the approvals.
//
// run's flags:
//
//	--approve         approve the script's permissions without asking (said in the output)
//	--serve DIR       serve DIR on 127.0.0.1 and open the first tab at its index
//	--url URL         open the first tab at URL instead
//	--headed          show the browser window (needs a display)
//	--browser PATH    the Chromium executable (else $TRANQUIL_CHROMIUM, else chromium on PATH)
//	--deno PATH       the deno executable (else $TRANQUIL_DENO, else this repository's
//	                  .tools/node_modules/.bin/deno, else deno on PATH)
//	--lines A-B       run only lines A to B of the script (run-selection)
//	--click NAME      click the pane control NAME once the script registers it
//	--json            print the run record as JSON on stdout; output lines go to stderr
//
// While a script runs, its output streams live; a pane control is clicked by
// typing its name and Enter. Ctrl-C cancels the run through the run manager:
// the script's context.signal aborts, and after a grace period the process
// group is stopped.
//
// Exit codes: 0 the run succeeded, 1 it failed (or the host could not run it),
// 2 it was refused (a bad header, or consent denied), 3 it was cancelled or
// timed out, 64 the command line was wrong.
package main
