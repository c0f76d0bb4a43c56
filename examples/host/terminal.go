package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/runner"
)

// lines reads the terminal's input line by line on one goroutine, shared by
// the consent prompt and the pane controls. The goroutine ends when the
// input does; the program exits without waiting for it.
type lines struct {
	once sync.Once
	in   io.Reader
	ch   chan string
}

func newLines(in io.Reader) *lines { return &lines{in: in, ch: make(chan string)} }

// next returns the next line; ok is false when the input ended.
func (l *lines) next(ctx context.Context) (line string, ok bool, err error) {
	l.once.Do(func() {
		go func() {
			sc := bufio.NewScanner(l.in)
			for sc.Scan() {
				l.ch <- sc.Text()
			}
			close(l.ch)
		}()
	})
	select {
	case s, ok := <-l.ch:
		return s, ok, nil
	case <-ctx.Done():
		return "", false, ctx.Err()
	}
}

// terminalPrompter asks for consent on the terminal. With approve set it
// shows the same wording and approves without asking, saying so.
type terminalPrompter struct {
	out     io.Writer
	in      *lines
	approve bool
}

func (p *terminalPrompter) Ask(ctx context.Context, req consent.Request) (consent.Answer, error) {
	writeRequest(p.out, req)
	if p.approve {
		fmt.Fprintln(p.out, "Approved without asking (--approve).")
		return consent.Approve, nil
	}
	fmt.Fprint(p.out, "Allow this script to run with these permissions? [y/N] ")
	line, ok, err := p.in.next(ctx)
	if err != nil {
		return consent.Deny, err
	}
	if !ok {
		fmt.Fprintln(p.out, "\nNo answer (the input ended); not approved. Pass --approve to approve without asking.")
		return consent.Deny, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return consent.Approve, nil
	}
	return consent.Deny, nil
}

// writeRequest words a consent request: every grant on a first run, the
// diff when an approved declaration changed.
func writeRequest(w io.Writer, req consent.Request) {
	fmt.Fprintf(w, "\nThe script %s asks for permission.\n", safe(req.Script))
	if req.FirstRun {
		fmt.Fprintln(w, "It has not run here before. If you allow it, it can:")
		writeGrants(w, "  ", req.Grants)
	} else {
		fmt.Fprintln(w, "Its permissions changed since you approved them.")
		if len(req.Added) > 0 {
			fmt.Fprintln(w, "It now also asks to:")
			writeGrants(w, "  + ", req.Added)
		}
		if len(req.Removed) > 0 {
			fmt.Fprintln(w, "It no longer asks to:")
			writeGrants(w, "  - ", req.Removed)
		}
		fmt.Fprintln(w, "All it would be allowed to do:")
		writeGrants(w, "  ", req.Grants)
	}
	if req.Header != nil {
		fmt.Fprintf(w, "Declared: %s\n", safe(req.Header.Canonical()))
	}
}

func writeGrants(w io.Writer, prefix string, ds []permissions.Description) {
	if len(ds) == 0 {
		fmt.Fprintf(w, "%snothing beyond the sandbox\n", prefix)
	}
	for _, d := range ds {
		fmt.Fprintf(w, "%s[%s risk] %s\n", prefix, d.Risk, safe(d.Text))
	}
}

// terminalUI shows notifications and opened files on the terminal.
type terminalUI struct {
	mu  sync.Mutex
	out io.Writer
}

func (u *terminalUI) Notify(_ context.Context, run runner.RunInfo, message string, level runner.Level) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	fmt.Fprintf(u.out, "notify [%s]: %s\n", safe(string(level)), safe(message))
	return nil
}

func (u *terminalUI) Open(_ context.Context, run runner.RunInfo, path string, opts runner.OpenOptions) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if opts.Split != "" {
		fmt.Fprintf(u.out, "open: %s (split %s)\n", safe(path), safe(opts.Split))
	} else {
		fmt.Fprintf(u.out, "open: %s\n", safe(path))
	}
	return nil
}

// memClipboard is a clipboard of the program's own: a terminal has no
// portable system clipboard without cgo, and a demo must not read the
// user's. A desktop host wires its real one.
type memClipboard struct {
	mu   sync.Mutex
	text string
}

func (c *memClipboard) Read(context.Context, runner.RunInfo) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.text, nil
}

func (c *memClipboard) Write(_ context.Context, _ runner.RunInfo, text string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text = text
	return nil
}

// dirWorkspace reports a fixed project directory.
type dirWorkspace string

func (d dirWorkspace) ProjectDir(context.Context, runner.RunInfo) (string, error) {
	return string(d), nil
}
