// Package runner runs automation scripts: it wires permissions, consent,
// the RPC bridge and history into a run manager that spawns sandboxed deno
// processes, streams their output, cancels them, times them out and
// records every run.
//
//   - [New] creates a [Manager] from a [Config]; [Manager.Prepare] lays
//     down the embedded SDK and caches its dependency; [Manager.Shutdown]
//     stops everything, giving scripts their grace, and [Manager.Close]
//     at once.
//   - [Manager.Start] begins a [Run]; [Run.Wait], [Run.Cancel] and the
//     [Config.OnEvent] stream follow it ([Manager.Lookup] finds a live run
//     by ID). [Run.SendEvent] (or [Manager.SendEvent]) delivers an event by
//     name, with a payload, to the script's step.waitForEvent, and
//     [Request.TriggerPayload] becomes its context.payload.
//   - [Manager.Plan] previews a run: its exact deno arguments, approval and
//     module-graph verdict, without running anything.
//   - The host implements [UI], [Clipboard], [Workspace] and [Tabs] (a
//     browser the runner drives over CDP on the script's behalf) in [Host];
//     package cdptabs has a reference Tabs.
//
// # A run, step by step
//
//  1. The script is read and its header parsed. A missing or invalid header
//     refuses the run (StateRefused, with line and column) — never a run on
//     a baseline.
//  2. Consent: an approved, unchanged header goes on; a new or changed one
//     asks the host's consent.Prompter; a denial refuses the run.
//  3. The module graph is checked (deno info, no downloads): every local
//     file it loads must be the entry, the SDK, or inside a read= grant.
//     Deno loads static imports, text and JSON imports included, without
//     any permission check, so this closes a read hole the flags alone
//     leave open. Passed checks are cached until the content (SHA-256) of
//     a file of the graph or the header changes; size and mtime are no key,
//     since a script that may write a module can keep both.
//     Every check, cached or not, first walks the read= and write= trees
//     and follows each link in them (deno checks grants on the path as
//     written, then follows links): a link that resolves into the host's
//     data, into /proc or /dev/fd on Linux, or into a .runs folder refuses
//     the run with a [GrantError] naming the grant and the link. The walk
//     stops at [MaxGrantEntries] entries or after [MaxGrantWalk]; a tree it
//     could not finish refuses the run ([ErrGrantTooLarge]), since what
//     was not checked cannot be trusted. Every import the graph names,
//     string-literal dynamic ones included, is checked against one table
//     (the SDK's testing kit applies the same one): node:, data: and the
//     SDK's own packages load; a bare name the import map does not hold,
//     blob: and unknown schemes never do; npm:, jsr: and http(s): need an
//     import= grant or [Config.DefaultImports]. With [Config.JSR], the
//     @std packages the SDK ships load at their pinned versions from the
//     module cache, under a lock the run is held to (--frozen), so a
//     changed cache entry fails the run; Prepare caches them. Anything
//     else refuses the run at Plan ([ErrRemoteImport]) with what to do
//     instead, never later at run time.
//  4. Until here the run is preparing; now it is queued, and waits for a
//     slot (at most [Config.MaxConcurrent] execute at once; slots go to
//     the queued runs in the order they were started, so a run slow to
//     get ready keeps its turn and one still preparing holds no one back),
//     gets a one-time bridge token,
//     and deno starts with the flags permissions.Flags computes, in its own
//     process group (with a parent-death signal on Linux), with an
//     environment built from scratch: the TRANQUIL_* variables, DENO_DIR
//     (the run's own cache folder; see Disk under Limits),
//     NO_COLOR, DENO_NO_UPDATE_CHECK, PATH and HOME only when a run= grant
//     needs them, and the variables env= declares. Never the host's whole
//     environment. No read= or write= grant may reach the manager's DataDir
//     or CacheDir, or the consent store's files (consent.Store.Protected,
//     its key among them), wherever they live: a script that could write
//     there could approve itself or poison cached code, and one that could
//     read there could read other runs' output.
//  5. Output streams line by line as events; a line of any length cannot
//     break the reader, and [Config.OutputCap] bounds what is kept and sent.
//     context.log lines are events and output too; steps (start, retry,
//     end) are [EventStep] events and context.progress [EventProgress]
//     ones, for a host's runs panel. An uncaught error is printed by the
//     bootstrap as its name, code and message followed by the script's
//     own frames (never the SDK's or capnweb's), and browser errors reach
//     the script in words it can act on, not Go's or the protocol's.
//  6. The run ends by exiting, by [Run.Cancel] (the SDK's control stub gets
//     cancel(reason) and context.signal aborts; the script's host calls
//     under way fail with code cancelled; after [Config.CancelGrace]
//     the group gets SIGTERM, then after [Config.KillGrace] SIGKILL), or by
//     timing out (@timeout, or [Config.DefaultTimeout]; "@timeout none"
//     never times out). [Manager.Shutdown] cancels every run so, and kills
//     those still going when its context ends; [Manager.Close] and a
//     revoked approval skip to SIGKILL. Once deno has exited, its output is read for at most
//     KillGrace more, in case a process it started still holds it, and
//     then whatever is left of its group is killed. So a cancel stops the
//     process within CancelGrace + KillGrace (3 s by default), and the run
//     is done within that plus the 10 s the host gets to close the run's
//     tabs; a kill takes KillGrace plus the tabs. A cancelled run's first
//     error line is the reason it was cancelled. Host calls the script left running when it ended
//     (a forgotten await) are cut off and kept as the entry's Warnings.
//     The run's Duration leaves out the time spent asking for consent.
//     Then everything the run held goes: its session and
//     token, its paneControls stubs, every process of its group. The
//     history entry is written, and a failure or timeout notifies the host
//     with the first line of the error and the run ID. An entry the
//     history cannot store whole (a full disk) is stored with its outcome
//     and less output, one it cannot store at all is retried; either way,
//     and when an approval could not be saved, the host is told.
//
// A deno that cannot be started (not executable, not a program, gone) is
// the host's failure: [New] refuses a deno path that is not executable,
// and a run it stops ends StateFailed with the fix in its reason
// ([ErrDenoUnusable]), never StateRefused.
//
// # The script API
//
// The capabilities' methods, their parameters and results are listed in
// runner/sdk/contract.json, which a test regenerates from the objects the
// runner serves and the SDK's tests hold its calls and its fake host to.
// Every method has a row in one table (methods.go) saying how it passes
// the run's gate, how long it may wait, whether it acts on a tab and what
// the trace keeps of it; one interceptor (intercept.go) does that around
// each method's own body.
// The objects a script passes (options, targets, step and progress
// reports) are the request types in contract.go (named there as the SDK
// names them: FormOptions, NavigationOptions, …) or a [cdp.Locator],
// decoded once, strictly, by capnweb ([capnweb.StrictArgs]); a key the type does not name, or a value of the wrong
// type, is refused with code invalid and a message naming the key, and a
// key set to undefined or null counts as absent.
//
// # Limits
//
// Everything a script hands the host is bounded ([ChannelLimits] is the
// table the runner enforces; the SDK's guide has the same in its "Limits"
// section). Sizes, and what a script sees past them:
//
//   - a context.log line and a ui.notify message: [MaxLineBytes] (64 KiB),
//     cut, ending in "… [N bytes cut]";
//   - a context.progress message and a step's error: [MaxReportBytes]
//     (1 KiB), a step's name: [MaxStepNameBytes] (256 bytes), cut likewise;
//   - context.result: [MaxResultBytes] (1 MiB of JSON), a config value:
//     [MaxConfigValueBytes] (1 MiB of JSON, 4 MiB for a script's values
//     together), a clipboard.write text: [MaxClipboardBytes] (1 MiB), a
//     ui.open path: [MaxOpenPathBytes] (4 KiB), a pane control's name:
//     [MaxPaneNameBytes] (128 bytes), and [MaxPaneControls] (64) controls:
//     a RangeError with code limit_exceeded (its limit property holds the
//     limit, its message names it);
//   - what a pane control returns: [MaxPaneResultBytes] (64 KiB of JSON),
//     else [Manager.InvokePaneControl] fails with [ErrLimitExceeded];
//   - event and trigger payloads, which the host sends: [MaxPayloadBytes]
//     (64 KiB of JSON), else [ErrPayloadTooLarge];
//   - a RegExp given to tab.expect: a source of [cdp.MaxPatternBytes]
//     (1 KiB) that compiles to at most [cdp.MaxPatternInstructions]
//     (10,000), both checked before it is compiled, else an error with
//     code limit_exceeded and the limit (the SDK's TabError, its
//     details.limit); it is matched against the first
//     [cdp.MaxMatchBytes] (1 MiB) of the element's text, and a match still
//     running when the call's timeout passes, or the run ends, stops then
//     and fails with code timeout.
//
// Rates, per run, as a token bucket per channel (sustained, and at once):
// context.log 300 a second and 1000, context.progress 100 and 500, step
// reports 300 and 1000, ui.notify 10 and 50: past them the calls are
// dropped, the script is never held up, and at most once a second, and
// before the run's end, the host gets one [EventDropped] per channel (for
// ui.notify, one warning notification) saying how many. ui.open and
// clipboard.write 10 and 50, config.set and config.delete 50 and 200,
// paneControls.register 20 and 100: past them the call fails with code
// limit_exceeded. context.result has no rate: it reaches the host once,
// in the history entry.
//
// Only data passes: a function inside a config value, context.result or
// an options object fails with code not_serializable; one inside what a
// pane control returns makes [Manager.InvokePaneControl] fail with
// [ErrNotSerializable]. Either way the runner releases it; no
// capnweb stub reaches host code.
//
// Memory: everything a script can make the host hold or build counts
// against one budget per run, [Config.SessionBudget] (64 MiB by default),
// before it is built: through its session, the values it sent and still
// holds, the copies its references to earlier results ask for, the
// arguments of its calls under way and the results it has not released;
// through the browser, every reply to its tabs' page calls (a reply
// larger than what is left is read past, never built) and every evaluate
// result, charged for its JSON and for what decoding it builds. Past it
// the run fails with a reason starting "limit_exceeded: memory:" that
// names what asked for more; the host holds at most MaxConcurrent budgets
// for runs, plus their largest frames.
//
// Host time: a script can leave many waiting calls pending (waits,
// expectations, readers, actions waiting for their target), each polling
// its page. Their checks after each call's first take turns at
// [Config.CheckRate] (100 a second by default) for the whole run, so the
// host and browser time one run's polling costs is bounded by the rate,
// not by how many calls it leaves pending; pattern matching is bounded by
// size and ends with its call (see Limits).
//
// Disk: no run's deno has the shared module cache ([Config.CacheDir]) as
// its DENO_DIR, where every module it loads or makes (each data: URL) would
// stay for good. Each gets a folder of its own under <DataDir>/runs, which
// no grant reaches: the shared npm and registry packages linked in, the
// warm caches of a bootstrap Prepare loaded once copied in, and its
// script's localStorage (at most 10 MiB an origin) linked to where it is
// kept. What deno writes there is bounded by [Config.DiskLimit] (256 MiB
// by default, measured every second): past it the run fails with a reason
// starting "limit_exceeded:" that names its disk limit. The folder goes
// when the run ends, and [New] removes those a host that died left. Only
// Prepare writes the shared cache; the module checks before a run use a
// folder of their own too. The history keeps at most 100 runs, within
// 128 MiB of journal (2 MiB an entry, its output cut in the middle past
// that) and 256 MiB of traces (16 MiB a run), at its defaults (package
// history, "Size on disk").
//
// Nothing of a script's reaches the host after its run has ended: when the
// run settles, one gate closes on its events ([Config.OnEvent]), its UI,
// clipboard, workspace and config calls and its pane controls. Host calls
// still running are cancelled (and waited for, up to 5 s), calls its
// session still had queued are refused, and the run's final
// [EventState] is its last event.
//
// # The browser
//
// A run drives only tabs it resolved (tabs.active, find, all, open,
// triggered), each over a session of its own attached with
// [cdp.TabOptions]: the script's sites= and the run's action log. Before
// any of a browser's tabs is driven, its connection gets a cdp page gateway
// denying the bridge, every DevTools endpoint the host drives
// ([DevToolsEndpoints]) and [Config.DenyLoopback] to every page, along
// with downloads (but the one tab.waitForDownload waits for, which the
// browser saves into a private temporary folder and the host copies
// under the script's write= grants) and every
// scheme but http and https; a run's tabs (their
// pages, everything those load or send, WebSockets and workers included,
// and the popups they open) reach this computer or the local network only
// when the script's sites= names that host exactly or
// [Config.AllowLocalSites] lists it. A popup one of a run's pages opens is
// the run's: a tab it opened, closed when it ends (it takes no slot); one
// aimed at a local address the run may not reach is closed before it
// loads, and a tab showing such an address is left out of tabs.all and
// tabs.find (tabs.active and tabs.triggered show it without its address
// and title). This package holds no protocol code: every page action goes
// through cdp's page-action path, which checks sites= in the realm the
// action runs in and logs it. A run
// closes only the tabs it opened; tabs it opened in the foreground and in
// the background each take one of the Manager's slots
// ([Config.MaxForegroundTabs], [Config.MaxBackgroundTabs]) and wait, in
// order, for one; one run holds at most half of each kind's slots (at
// least one), so no run can keep another from opening a tab. A slot is given back, and tab.close resolves, only once
// the host no longer lists the tab. A tab opened in the background is
// never focused through the host (its session emulates focus), so it
// never becomes the tab the user sees, nor any run's tabs.active. A run's
// action log keeps [MaxActions] entries. When the browser is gone, browser
// calls fail with code closed; no message a script sees names a DevTools
// endpoint. Calls that take no timeout (url, title, evaluate, screenshot,
// tab.close, attaching a tab), and those given none (goto,
// waitForNavigation, waitFor, the form actions, and tabs.open once its
// turn for a slot has come), end after the default wait of 30 s; readers
// and expectations wait 5 s ([cdp.DefaultReadWait]). So a page whose code
// never yields (a dialog storm, see [cdp.Tab.HandleDialogs]) holds no call
// for ever. The host's own methods are called with the same 30 s deadline
// on their context (the tabs' Active, Find, All and Open, [UI],
// [Clipboard], [Workspace]); one that answers after it is reported to the
// script as code timeout. A tab in the background is screenshot where it
// is, neither shown nor focused.
//
// Each run also keeps a trace (package trace) with its history entry,
// unless [Config.NoTrace] is set: every host call the script made, once
// (method, target, tab, page address without query, times, outcome and
// code, and the script's file and line that made it; context.log, step
// and progress are reports, kept as output and steps), its tabs'
// navigations, first titles, console lines and page errors, dialogs,
// steps and progress, before-and-after screenshots of page actions when
// [Config.TraceActionScreenshots] asks for them, and for the first failed
// tab calls a small
// screenshot, text fields' contents blanked, and an accessibility outline
// of the page ([cdp.Tab.Evidence]). It never holds a value the script
// passed (a text typed, a clipboard's text, a config value, evaluate's
// code), nor a field's value or a prompt's answer. [Manager.Trace] reads
// it; package traceview shows it.
//
// The same trace holds the run's accesses outside the browser whenever
// tracing is on ([Config.NoTrace] turns both off): every permission check
// deno made (files read and written, hosts, env names but never their
// values, sys calls, imports), each kind, value and outcome once with a
// count, allowed or denied as the run's own flags decide (internal/audit). Deno
// reports them through DENO_AUDIT_PERMISSIONS to a FIFO in a 0700
// directory under DataDir, which no grant reaches; the flags alone
// enforce, never the report. Deno 2.9 does not report run checks, so the
// commands a run starts are not listed, and on Windows, where the pipe
// would need a named pipe, no accesses are recorded.
//
// Nothing a run's pages register outlives it as a service worker: each
// registration that appears on a site a run's tab was on is unregistered
// as soon as the browser reports it, and once more when the run lets go
// of the tab, unless [Config.KeepServiceWorkers] is set. Refusing at once
// rather than at the run's end also keeps the worker from other runs that
// overlap it, and from the user, if the host dies first. Cookies and
// storage the pages set stay: they are the user's profile.
//
// A run that succeeds copies what it wrote into the destination the user
// chose for the script, when [Config.Mirrors] declares one (see package
// mirror); [Manager.Sync] does the same on demand. A mirror's failure never
// changes the run's state.
//
// Revoking a script's approval (consent.Store.Revoke) kills its live runs at
// once, with the reason "approval revoked"; a revocation made by another
// Store or another process on the same data directory does too, within
// consent.StoreOptions.WatchInterval.
//
// # Run-selection
//
// A [Request] with a [Selection] runs the selected text under the source
// file's header and approval: the text is written to
// <source dir>/.runs/<run ID>--<source name> (mode 0600), at its own lines
// and columns of the source ([Selection.Line]), and deleted when the run
// ends, or at the next [New] if the host died first. Keeping it beside the
// source keeps relative imports as the user expects, and errors name the
// source file's lines; in exchange
// nothing else may write it between its writing and deno loading it. So no
// grant may lie in or lead into a .runs folder, no run starts whose write=
// grants (or links under them) reach a live selection file, a selection is
// refused while a live run's write= grants reach it ([ErrSelectionReachable]),
// and the folder and file are made fresh, never through a link
// ([ErrUnsafeSelection]).
package runner
