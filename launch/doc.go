// Package launch starts browsers and Electron apps for package cdp to
// drive, hands them off, probes them and cleans them up.
//
// Entry points:
//
//   - [Chromium] starts headless Chromium for the host's own use, with a
//     temporary profile, connected over a pipe ([Process.Browser]);
//     [Process.Close] ends it.
//   - [NewLauncher] gives a [Launcher] that owns its launches, for a tool
//     that drives desktop apps: [Launcher.Launch] starts Chromium or an
//     Electron app from a [Spec] and connects; [Launcher.Attach] tracks a
//     browser the caller started; [Launcher.Status], [Launcher.Probe] and
//     [Launcher.Cleanup] inspect and end them. A launch hands off
//     ([Spec.Handoff]: a [Snapshot] of element refs, the targets, or just
//     the connection) on the target its [TargetType] picks; Status and
//     Probe report a Mismatch when that target is gone or drifted.
//   - [Discover] lists installed Electron apps; [CheckElectron] tells an
//     Electron binary from others.
//   - [QA] runs a smoke check (text, selector, console errors,
//     exceptions, screenshot) on a tab of a launched app.
//
// # One noun: Process
//
// Both ways in return a [*Process]: what was started (the process, its
// process group and its temporary profile) together with its one
// connection, a [cdp.Browser]. It is not called Browser because
// cdp.Browser is the connection and a Process is what stands behind it,
// which for an Electron app is not a browser at all. The methods report
// the process and its connection (Browser, Pid, Port, Endpoint, DataDir,
// Executable, Done) and end it (Kill, Close); the fields are what a
// Launcher made of the launch (ID, Kind, the resolved App, the handoff).
// The two entry points stay two because they serve two users: a host that
// wants a browser of its own, and a tool that starts named desktop apps
// under an allow and deny policy and must see and end them later by ID.
// A Launcher's process is ended by Cleanup, which its Close calls.
//
// # Launching and cleaning up
//
// Every launch gets a fresh temporary profile (--user-data-dir) and
// --no-first-run, --no-default-browser-check and --disable-extensions;
// Chromium also gets [DefaultFlags], which keep it off the network except
// for the pages it is sent to, and a profile whose preferences turn off
// what flags cannot: the DNS probe an error page makes when a name does
// not resolve (it asks public DNS servers) and the prefetch of the names
// a page links to. The process runs in its own process group
// (on Linux with a parent-death signal, so a host that dies takes its
// browsers with it).
//
// Chromium is started with --remote-debugging-pipe: it speaks CDP on two
// pipes only the launching process holds (fds 3 and 4; on Windows two
// inherited handles named by --remote-debugging-io-pipes, see
// [cdp.ConnectPipe]) and opens no port, so no other process, and no page
// it shows, can reach the DevTools endpoint. The launch is ready when the
// browser answers Browser.getVersion on the pipe, and [Process.Browser] is
// its only connection: its Port and Endpoint are 0 and "". Chromium exits
// when its pipe closes. Electron apps cannot be driven over a pipe; they
// get --remote-debugging-port=0, their port is read from
// DevToolsActivePort, and [Launcher.Attach] and [cdp.Connect] reach
// user-started browsers over a WebSocket. A [Launcher] never touches what
// it did not start: cleanup of an attachment only closes the connection,
// and the profile sweep in [NewLauncher] removes only this package's
// profile directories whose host and browser are both dead.
//
// Cleanup has one budget for everything it ends ([DefaultCleanupBudget],
// 5 s, or [LauncherOptions.CleanupBudget], or the context's deadline when
// sooner): the launches are ended at the same time, an app that ignores
// the polite signal is killed when half of what is left has passed, and a
// step that could not finish in time is reported as failed, so an app
// that will not die cannot hold up a host's quit.
//
// # Errors
//
// Failures fall in categories matched with errors.Is: every failed launch
// matches [ErrLaunch] and one of [ErrValidation], [ErrPolicyBlocked],
// [ErrTimeout] and [ErrUpstream]; a launch gone without a cleanup is
// [ErrTabDrift], and a cleanup with a failed step [ErrCleanupFailed].
// [*Error], [*PolicyError] and [*CleanupError] carry the details.
// ErrTimeout is cdp.ErrTimeout itself, so the one code table
// ([github.com/tranquil/automation/errcode.Of]) gives a launch that ran out of time the code of a
// page that did.
package launch
