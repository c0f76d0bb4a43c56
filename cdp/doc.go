// Package cdp drives browser tabs over the Chrome DevTools Protocol: the
// host's side of every browser operation a script asks for.
//
// Entry points:
//
//   - [Connect] opens a [Browser] from a ws:// URL, an http:// debugging address or a DevToolsActivePort file;
//     [ConnectPipe] opens one over the debugging pipes of a browser started with --remote-debugging-pipe.
//   - [Guard] puts a [Gateway] on a connection: the page policy every request of every page obeys.
//   - [Browser.AttachWith] and [Browser.NewTabWith] give a [Tab] whose page actions are checked
//     against its [TabOptions] (sites, log); [Browser.Attach] and [Browser.NewTab] use the zero
//     options; [Browser.Targets] lists pages.
//   - [Tab.Evaluate], [Tab.Goto] (with the document's [Response]), [Tab.WaitForNavigation], [Tab.WaitNavigated],
//     [Tab.WaitFor], [Tab.Holds], [Tab.Screenshot]; [Tab.Evidence] (a small screenshot and an
//     accessibility outline, unlogged, for a trace of a failed action).
//   - [Tab.Text], [Tab.Value], [Tab.Attribute], [Tab.Checked], [Tab.IsVisible], [Tab.Count], [Tab.WaitVisible]:
//     readers in the isolated world; [Tab.SetFiles] fills a file input.
//   - [Tab.OnConsole], [Tab.OnPageError] and [Tab.ConsoleHistory]: the page's console and uncaught exceptions.
//   - [Tab.HandleDialogs]: how alert, confirm, prompt and beforeunload are answered (dismissed by default;
//     a page looping on dialogs faster than [DialogStormRate] a second is dismissed without asking).
//   - [Tab.InsertText], [Tab.Press], [Tab.Click]: trusted input; [Tab.PressKey] as a logged page action.
//   - [Tab.Fill], [Tab.Check], [Tab.Select], [Tab.SelectAll], [Tab.ClickElement], [Tab.PressElement],
//     [Tab.Resolve]: the form runtime.
//   - [Tab.ClickWith], [Tab.DblClick], [Tab.Hover], [Tab.DragTo], [Tab.Focus], [Tab.Type]: pointer and keyboard
//     verbs as page actions; [Tab.Texts], [Tab.Values], [Tab.Table]: bulk readers, bounded by [MaxReadCells]
//     and [MaxReadChars].
//   - [CheckNavigation] and [SiteAllowed]: the address and sites= rules.
//   - Errors carry a code of the one table (package errcode): [errcode.Of] finds it, errors.Is
//     matches it, and scripts, hosts and the action log share it.
//
// Starting browsers and Electron apps, and probing and cleaning them up, is
// package github.com/tranquil/automation/launch.
//
// # Connection
//
// All tabs of a [Browser] share one connection using flattened sessions:
// the debugging pipe of a launched browser, or a WebSocket to one started
// with a debugging port. The generated clients of github.com/mafredri/cdp
// ([Tab.Client]) work unchanged on each session. Messages up to [Options.MaxMessageSize] (256 MiB by default)
// go both ways; a bigger reply fails only its own call.
//
// Over the pipe (fds 3 and 4 of the browser, or two inherited handles on
// Windows; each message is JSON and a NUL byte) only the process that
// started the browser can reach it, since the browser opens no port: such a
// connection has no [Browser.WebSocketURL].
//
// A session that ends fails every call, pending or later, with a
// [*DetachedError] matching [ErrDetached] and one of [ErrTargetClosed],
// [ErrTargetCrashed] or [ErrBrowserClosed]. Nothing waits forever on a dead
// tab or browser.
//
// # The page policy
//
// A script's tabs are held to a default-deny policy in two layers, both in
// this package.
//
// The [Gateway] works in the browser, for every page, frame, popup and
// worker of the connection: the browser pauses, before it is sent, every
// request of a scheme other than http and https that its network stack
// serves (file:, chrome-extension:, …) and every request naming a denied
// port (the Fetch domain on the browser session), and the gateway fails
// every one that is not http or https, and every one to a denied port on
// loopback or behind a host name (any name may resolve to loopback): the
// bridge, the
// browser's own DevTools port when it has one, and whatever the
// [PagePolicy] lists. It also pauses every document request (a page's or
// a frame's navigation) and every request to an address that is local by
// its text: a tab attached with [TabOptions.Gateway] reaches this computer
// or the local network (loopback, link-local and private addresses,
// localhost names, and for documents names that resolve there) only when
// its Sites or the policy's AllowLocal name that host exactly. That holds
// for its pages, their subresources, workers and WebSockets, and its
// popups, which are its own guarded tabs ([TabOptions.Popup]); a page
// action in such a tab refuses a local document the same way.
// Downloads are denied, except the one a tab expects
// ([Tab.ExpectDownload]), which the browser saves into a private temporary
// folder for the caller to move. A document that commits in a
// tab with a refused scheme anyway (a history entry of chrome: or data:)
// is taken off its frame. [Tab.Goto] and [Browser.NewTabWith] refuse
// anything but http, https and about:blank themselves, since javascript:
// and data: addresses never become requests. Refusals are
// [*NavigationBlockedError]s and go to the tab's log.
//
// Every page action is logged once with the site it ran on, never a value,
// and checked where code runs: a call into a realm whose origin is not an
// allowed http or https site is a [*SiteError], on every retry too. Input
// and screenshots check the committed document.
//
// A tab attached with [TabOptions.RefuseServiceWorkers] unregisters the
// service workers its documents register, as soon as the browser reports
// them: a worker would answer its scope's requests in every tab of the
// profile long after the run.
//
// # Documents and realms
//
// A [Tab] is its target ID, stable across navigations. Each document is
// known by its loader ID and each JavaScript realm by its unique context id,
// so a call never lands in a document other than the one it was aimed at.
// When a navigation destroys the realm under [Tab.Evaluate] or
// [Tab.WaitFor], the call is made again in the new document until its
// context ends.
//
// # The form runtime
//
// Form actions run a small embedded JavaScript runtime in an isolated world
// named "tranquil-sdk". It shares the page's DOM but not its JavaScript, so
// a page that tampers with built-ins cannot change how a field is found.
// Values travel as arguments, never as code. Typing is trusted input
// (Input.insertText); the result is read back, and a value the page did not
// keep is [errcode.NotCommitted]. The action log ([TabOptions.Log]) records the
// method, target, site and outcome, never the value.
//
// Targets given by role and name, or by label, are found where the browser
// keeps roles and accessible names for screen readers (its accessibility
// tree, through open and closed shadow roots), then handed to the isolated
// world, which checks and keeps them like any other match. Every action
// waits until its target is actionable (see [Tab.ClickElement]); picker
// inputs are set through the element's own setter and read back.
//
// # Frames
//
// A tab tracks every frame of its page, cross-site ones (their own
// targets, attached automatically) included, and each frame's documents
// get the isolated world. Form actions, readers and [Tab.Resolve] look for a
// target in the main frame and in every frame whose document the tab's
// sites allow, judged by that frame's own address and, where code runs,
// its realm's origin; a match in two frames is [errcode.Ambiguous], and
// [Locator.Frame] narrows the search. The element is then operated in its
// frame: runtime calls in that frame's world, keys through the page to the
// frame the runtime focused, clicks at the element's point moved into the
// page's viewport by each enclosing frame's content box, after checking
// that the page shows that point and that nothing of the page lies in
// front of the frame there. [Tab.Evaluate] runs in the main frame only.
//
// # What a script's input may cost
//
// A [Pattern] comes from a script and is compiled and matched in the
// host's process, so [CompilePattern] bounds it before spending on it: a
// source of at most [MaxPatternBytes] (1 KiB), checked before it is
// parsed, and a program of at most [MaxPatternInstructions] (10,000),
// counted before it is built. Past either it returns a
// [*PatternLimitError], code limit_exceeded. [Tab.Expect] matches it
// against the first [MaxMatchBytes] (1 MiB) of the element's text; a
// match that would take long ends with the call's context and fails with
// its error (code timeout), never as a text that did not match.
//
// [Tab.Screenshot] captures a tab in the background where it is: the
// capture runs while the tab is screencast, which keeps a hidden page
// painting without showing it or taking the user's focus.
package cdp

// Layout (for maintainers; not part of the package documentation). A Tab
// is two parts. The session core owns the tab's sessions, realms, frames,
// navigation, input, dialogs, console and screenshots: tab.go,
// tabforms.go, frames.go, eval.go, nav.go, input.go, response.go,
// dialogs.go, local.go, localnet.go, sockets.go, workers.go, openers.go,
// popupguard.go, serviceworkers.go, history.go, screenshot.go and
// action.go. Every goroutine a tab starts past the call that started it
// goes through its task group (tasks.go), which Detach and Close end and
// wait for. The form runtime locates elements and acts on them:
// forms.go, readers.go, ready.go, files.go and ax.go, as methods of
// forms, which Tab embeds so that they are Tab's methods. The form runtime reaches the page only through the core
// interface (forms.go), which Tab implements in tabforms.go; it never
// names Tab or its fields. TestFormsBoundary holds that rule.
//
// Below the tabs, mux.go carries every session over one transport; the
// bytes of that (a frame's session and reply id, a call's frame, the
// pipe's NUL framing) are package cdp/internal/wire, which is pure and
// tests and fuzzes without a browser. So are the site rules a tab
// applies (sites=, documents and navigations a script may touch, local
// grants): package cdp/sitepolicy, which policy.go, local.go, localnet.go
// and sockets.go call. A script's patterns (pattern.go, urlwait.go's
// globs) are package cdp/textpattern's.
