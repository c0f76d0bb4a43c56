// Package browserproc is what starting a browser process takes, shared by
// package launch, which starts browsers, and package cdp, whose own tests
// start Chromium without importing launch (launch imports cdp) and whose
// cdp.Connect reads DevToolsActivePort:
//
//   - [SafeFlags] and [DefaultFlags], the flags a launch passes;
//     [SandboxArgs], what a root process needs besides.
//   - [Attr] starts the browser in a process group of its own (on Linux
//     with a parent-death signal); [KillTree] signals that group;
//     [Alive] and [GroupAlive] tell whether anything of it still runs.
//   - [NewPipes] and [PassPipes] give a browser its ends of the
//     --remote-debugging-pipe pair.
//   - [ActivePort] reads a DevToolsActivePort file.
//   - [WriteProfilePrefs] keeps a fresh profile off the network beyond
//     the pages it loads (no error-page DNS probe, no link prefetch).
package browserproc
