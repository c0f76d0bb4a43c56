package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Exit codes.
const (
	exitOK        = 0
	exitFailed    = 1
	exitRefused   = 2
	exitCancelled = 3
	exitUsage     = 64
)

func main() {
	os.Exit(realMain(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// app is one invocation of the program: its standard streams and the flags
// every subcommand shares.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	data           string
	jsr            string // the --jsr registry: runner.Config.JSR
}

var commands = map[string]func(*app, context.Context, []string) int{
	"run":       (*app).run,
	"plan":      (*app).plan,
	"history":   (*app).history,
	"show":      (*app).show,
	"approvals": (*app).approvals,
	"revoke":    (*app).revoke,
	"doctor":    (*app).doctor,
	"mirror":    (*app).mirror,
	"trace":     (*app).trace,
}

const usage = `usage: host [--data DIR] COMMAND [flags] [ARG]

commands:
  run [flags] SCRIPT       run a script (flags: --approve --serve DIR --url URL --headed
                           --browser PATH --deno PATH --lines A-B --click NAME --json --trace)
  plan [--json] SCRIPT     show what a script would get, without running it
  history [--json] [-n N]  list recent runs
  show [--json] RUN_ID     show one run
  approvals [--json]       list approved scripts
  revoke SCRIPT            withdraw a script's approval
  doctor [--json]          check deno, Chromium, the data dir and the SDK cache
  mirror set SCRIPT DIR    copy a script's write= outputs to DIR after every succeeded run
  mirror status [SCRIPT]   show the mirrors and what their last sync did (--json)
  mirror remove SCRIPT     stop mirroring a script
  mirror sync SCRIPT       copy a script's outputs to its mirror now
  trace [--addr ADDR] [ID] serve the runs' traces on 127.0.0.1 (a local web page), or run ID's
  help                     print this (as do --help and COMMAND --help)

exit codes: 0 succeeded, 1 failed, 2 refused, 3 cancelled or timed out, 64 usage error
`

func realMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	stdout, stderr = terminalWriter{stdout}, terminalWriter{stderr}
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	// --data may also come before the command.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		switch {
		case args[0] == "--data" || args[0] == "-data":
			if len(args) < 2 {
				fmt.Fprint(stderr, usage)
				return exitUsage
			}
			a.data, args = args[1], args[2:]
		case strings.HasPrefix(args[0], "--data=") || strings.HasPrefix(args[0], "-data="):
			a.data, args = args[0][strings.Index(args[0], "=")+1:], args[1:]
		case args[0] == "-h" || args[0] == "--help" || args[0] == "-help":
			fmt.Fprint(stdout, usage)
			return exitOK
		default:
			fmt.Fprintf(stderr, "unknown flag %s before the command\n%s", args[0], usage)
			return exitUsage
		}
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if args[0] == "help" || wantsHelp(args[1:]) {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "unknown command %q\n%s", args[0], usage)
		return exitUsage
	}
	return cmd(a, ctx, args[1:])
}

// wantsHelp reports whether a subcommand's arguments ask for help (-h,
// --help) before any "--".
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// scriptArg makes a SCRIPT argument absolute and checks that it names a
// file: a mistyped path is the command line's error (exitUsage), never a
// refused run in the history.
func (a *app) scriptArg(cmd, arg string) (string, bool) {
	script, err := filepath.Abs(arg)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(script); err == nil && fi.IsDir() {
			err = fmt.Errorf("%s is a directory, not a script", script)
		}
	}
	if err != nil {
		fmt.Fprintf(a.stderr, "%s: %s\n", cmd, safe(err.Error()))
		return "", false
	}
	return script, true
}

// flags returns a FlagSet for a subcommand, with the shared --data.
func (a *app) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(a.stderr)
	fs.StringVar(&a.data, "data", a.data, "the data directory")
	fs.StringVar(&a.jsr, "jsr", a.jsr, "the JSR registry scripts' @std imports load from, as https://jsr.io/ (none: scripts have no @std)")
	return fs
}

// parse parses flags wherever they appear among the arguments, so that
// "plan SCRIPT --json" works as well as "plan --json SCRIPT", and returns
// the positional arguments.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// positional parses args and checks the number of positional arguments.
func (a *app) positional(fs *flag.FlagSet, args []string, want int, what string) ([]string, bool) {
	pos, err := parse(fs, args)
	if err != nil {
		return nil, false
	}
	if len(pos) != want {
		if want == 0 {
			fmt.Fprintf(a.stderr, "%s takes no arguments\n", fs.Name())
		} else {
			fmt.Fprintf(a.stderr, "%s needs %s\n", fs.Name(), what)
		}
		return nil, false
	}
	return pos, true
}

// dataDir returns the data directory, made absolute.
func (a *app) dataDir() (string, error) {
	d := a.data
	if d == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("no user config directory; pass --data DIR: %w", err)
		}
		d = filepath.Join(base, "tranquil-automation")
	}
	return filepath.Abs(d)
}

// denoCacheDir is deno's module cache: $DENO_DIR when set, as for deno
// itself, else empty, which the runner reads as <data>/deno-cache.
func denoCacheDir() string { return os.Getenv("DENO_DIR") }

// errNotFound reports a tool found nowhere.
var errNotFound = errors.New("not found")

// findDeno locates deno: the flag, then $TRANQUIL_DENO, then this
// repository's .tools when run from inside it. An empty path with a nil
// error means "deno on PATH" (the runner's AllowPATH).
func findDeno(flagPath string) (path string, fromPATH bool, err error) {
	if flagPath != "" {
		return flagPath, false, nil
	}
	if p := os.Getenv("TRANQUIL_DENO"); p != "" {
		return p, false, nil
	}
	if root, ok := repoRoot(); ok {
		p := filepath.Join(root, ".tools", "node_modules", ".bin", "deno")
		if runtime.GOOS == "windows" {
			p += ".exe"
		}
		if isExecutable(p) {
			return p, false, nil
		}
	}
	p, err := exec.LookPath("deno")
	if err != nil {
		return "", false, fmt.Errorf("deno %w: pass --deno PATH, set TRANQUIL_DENO, or run `make tools` in the repository", errNotFound)
	}
	return p, true, nil
}

// findChromium locates the browser: the flag, $TRANQUIL_CHROMIUM, then the
// usual names on PATH.
func findChromium(flagPath string) (string, error) {
	if flagPath != "" {
		return flagPath, nil
	}
	if p := os.Getenv("TRANQUIL_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("chromium %w: pass --browser PATH, set TRANQUIL_CHROMIUM, or install chromium", errNotFound)
}

// repoRoot finds this module's checkout above the working directory.
func repoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(data), "module github.com/tranquil/automation\n") {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode()&0o111 != 0
}

// printJSON writes v indented, with a final newline, and with the
// characters a terminal would act on escaped (see escapeJSON).
func printJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSON(buf.Bytes()))
	return err
}
