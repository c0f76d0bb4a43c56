// Package cdptabs is a reference implementation of the runner's Tabs host
// interface, backed by a Chromium driven over the DevTools protocol.
//
//   - [Launch] starts a headless (or headed) Chromium with an isolated
//     profile and returns its [Tabs]; [Attach] wraps a browser that is
//     already running.
//   - [Tabs] implements runner.Tabs and runner.DevToolsEndpoints.
//   - [LaunchWith] and [AttachWith] take a [Config] whose OnBrowser hears
//     of a browser that died ([BrowserGone]) and of its replacement
//     ([BrowserRelaunched]).
//
// A launched browser that dies (a crash, a kill) is replaced by a fresh
// one on the next call that needs it, so a host need not restart; a run
// that used the browser that died fails every call from then on with the
// code "closed", and later runs get the fresh one. An attached browser is
// the user's: it is never restarted, only reported.
//
// A launched browser speaks CDP over a pipe (--remote-debugging-pipe) and
// listens on no port: [Tabs.Target] hands runs the host's own connection,
// and there is no DevTools endpoint a script could reach. An attached
// browser has a port; DevToolsEndpoints names it, so every run is denied
// it.
//
// Tab IDs are CDP target IDs: stable for a tab's lifetime, never derived
// from its URL. Background tabs are created in the browser's default
// context, so they share the profile (cookies, signed-in sessions) of the
// visible ones. Focus activates the target.
//
// Active is the tab the browser shows: the one last opened in the
// foreground or focused that is still open. A tab opened in the background
// is never it, so one run's background tabs are no other run's answer;
// closing the tab shown shows the one shown before it. Close returns once
// the tab is gone from All.
//
// It serves the example host and the tests, and is a starting point for a
// host whose tabs live elsewhere (an Electron <webview>, say).
package cdptabs
