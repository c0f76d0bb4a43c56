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
//	host doctor [--json]           check deno, Chromium, the data dir and the SDK cache;
//	                               it creates nothing (the data dir included)
//	host mirror set SCRIPT DIR     copy SCRIPT's write= outputs to DIR after every succeeded run
//	host mirror status [--json] [SCRIPT]
//	                               show the mirrors and what their last sync did
//	host mirror remove SCRIPT      stop mirroring SCRIPT; files already copied stay
//	host mirror sync SCRIPT        copy SCRIPT's outputs to its mirror now
//	host trace [--addr A] [ID]     serve the runs' traces on 127.0.0.1 (run ID's page, given one)
//	host help                      print the usage (as do --help and COMMAND --help)
//
// Every subcommand takes --data DIR, the data directory (default: the user
// config directory's tranquil-automation folder). It holds the SDK, deno's
// module cache (unless DENO_DIR is set), the run history, the approvals and,
// beside them, the output mirrors. Every subcommand also takes --jsr URL, the
// JSR registry (such as https://jsr.io/) the SDK's @std packages are cached
// from at their pinned versions; without it scripts have no @std, and a
// script that imports one is refused, saying so.
//
// plan asks the run manager (runner.Manager.Plan) for the exact deno command
// line, the approval state and the module-graph check, so a script that
// imports a local file its header does not declare is reported refused. The
// bridge port is shown as a placeholder: a run picks its own. No DevTools
// port is denied, because the browser run launches speaks CDP over a pipe
// and listens on none.
//
// A mirror is the user's choice of a folder outside the script's directory
// where its results accumulate: one way, never deleting. set refuses (exit
// 2) a destination inside the script's directory or a write= grant, or one
// containing them. status tells "never synced" from "synced, nothing to
// copy", "copied N" and "failed", and lists the files a sync skipped and
// why. After a succeeded run, run prints what the mirror copied.
//
// run's flags:
//
//	--approve         approve the script's permissions without asking (said in the output)
//	--serve DIR       serve DIR on 127.0.0.1 and open the first tab at its index; every
//	                  script may load it (other local pages take sites= naming them)
//	--url URL         open the first tab at URL instead
//	--headed          show the browser window (needs a display)
//	--browser PATH    the Chromium executable (else $TRANQUIL_CHROMIUM, else chromium on PATH)
//	--deno PATH       the deno executable (else $TRANQUIL_DENO, else this repository's
//	                  .tools/node_modules/.bin/deno, else deno on PATH)
//	--lines A-B       run only lines A to B of the script (run-selection)
//	--click NAME      click the pane control NAME once the script registers it
//	--json            print the run record as JSON on stdout, with its trace's calls,
//	                  navigations and failures; output lines go to stderr
//	--trace           when the run does not succeed, serve its trace on 127.0.0.1 and
//	                  print the page's address, until Ctrl-C
//
// While a script runs, its output streams live; a pane control is clicked by
// typing its name and Enter. Ctrl-C (or SIGTERM) cancels the run through the
// run manager, at the consent prompt too: the script's context.signal
// aborts, and after a grace period the process group is stopped. A second
// one exits at once, without waiting for the run to end.
//
// Text a script controls (its path, notifications, output, log lines,
// results, errors, pane controls, history) is printed with control, bidi
// and other invisible characters escaped (package display), so it cannot
// move the cursor, recolour or rewrite what the terminal shows, the consent
// prompt included; --json output escapes them as JSON \u escapes, which
// decode to the exact text.
//
// Exit codes: 0 the run succeeded, 1 it failed (or the host could not run it),
// 2 it was refused (a bad header, an undeclared import, or consent denied),
// 3 it was cancelled or timed out, 64 the command line was wrong (a SCRIPT
// that is not a file included: a mistyped path is never a run). The other
// commands use the same codes: plan exits 2 for a script a run would refuse,
// mirror set and mirror sync for a refused destination or unapproved
// permissions, and revoke and mirror remove exit 1 when there was nothing to
// withdraw.
package main
