package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/history"
	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/runner"
)

// planOut is what plan prints with --json.
type planOut struct {
	Script       string         `json:"script"`
	Refused      bool           `json:"refused"`
	Reason       string         `json:"reason,omitempty"`
	Line         int            `json:"line,omitempty"`
	Column       int            `json:"column,omitempty"`
	Grants       []string       `json:"grants,omitempty"`
	Capabilities []string       `json:"capabilities,omitempty"`
	Timeout      string         `json:"timeout,omitempty"`
	Command      []string       `json:"command,omitempty"`
	Consent      []consentLine  `json:"consent,omitempty"`
	Approval     approvalStatus `json:"approval"`
}

type consentLine struct {
	Risk string `json:"risk"`
	Text string `json:"text"`
}

type approvalStatus struct {
	// Status is "not-needed", "approved", "changed" or "not-approved".
	Status     string    `json:"status"`
	ApprovedAt time.Time `json:"approvedAt,omitzero"`
	Added      []string  `json:"added,omitempty"`
	Removed    []string  `json:"removed,omitempty"`
}

func (a *app) plan(ctx context.Context, args []string) int {
	fs := a.flags("plan")
	asJSON := fs.Bool("json", false, "print the plan as JSON")
	denoFlag := fs.String("deno", "", "the deno executable")
	pos, ok := a.positional(fs, args, 1, "a SCRIPT")
	if !ok {
		return exitUsage
	}
	script, ok := a.scriptArg("plan", pos[0])
	if !ok {
		return exitUsage
	}
	p, code := a.makePlan(ctx, script, *denoFlag)
	if *asJSON {
		if err := printJSON(a.stdout, p); err != nil {
			return exitFailed
		}
		return code
	}
	w := a.stdout
	if code == exitFailed {
		fmt.Fprintf(a.stderr, "plan: %s\n", safe(p.Reason))
		return code
	}
	if p.Refused {
		fmt.Fprintf(w, "refused: %s\n", safe(located(p.Script, p.Line, p.Column, p.Reason)))
		return code
	}
	fmt.Fprintf(w, "script:       %s\n", safe(p.Script))
	fmt.Fprintf(w, "grants:       %s\n", safe(orNone(strings.Join(p.Grants, " "))))
	fmt.Fprintf(w, "capabilities: %s\n", strings.Join(p.Capabilities, " "))
	fmt.Fprintf(w, "timeout:      %s\n", p.Timeout)
	fmt.Fprintln(w, "consent:")
	if len(p.Consent) == 0 {
		fmt.Fprintln(w, "  nothing beyond the sandbox")
	}
	for _, c := range p.Consent {
		fmt.Fprintf(w, "  [%s risk] %s\n", c.Risk, safe(c.Text))
	}
	switch p.Approval.Status {
	case "not-needed":
		fmt.Fprintln(w, "approval:     not needed (the script declares none)")
	case "approved":
		fmt.Fprintf(w, "approval:     approved %s\n", p.Approval.ApprovedAt.Local().Format(time.DateTime))
	case "changed":
		fmt.Fprintln(w, "approval:     changed since it was approved; the next run asks again")
		for _, g := range p.Approval.Added {
			fmt.Fprintf(w, "  + %s\n", safe(g))
		}
		for _, g := range p.Approval.Removed {
			fmt.Fprintf(w, "  - %s\n", safe(g))
		}
	default:
		fmt.Fprintln(w, "approval:     not approved; the first run asks")
	}
	fmt.Fprintln(w, "command (ports are chosen when the run starts):")
	command := make([]string, len(p.Command))
	for i, arg := range p.Command {
		command[i] = safe(arg)
	}
	fmt.Fprintf(w, "  %s\n", strings.Join(command, " \\\n    "))
	fmt.Fprintln(w, "module graph: every local file it loads is the script, the SDK or inside a read= grant")
	return code
}

// makePlan asks the run manager what a run of script would get, and
// returns it with the exit code.
func (a *app) makePlan(ctx context.Context, script, deno string) (planOut, int) {
	abs, err := filepath.Abs(script)
	if err != nil {
		return planOut{Script: script, Refused: true, Reason: err.Error()}, exitRefused
	}
	p := planOut{Script: abs}
	refuse := func(err error) (planOut, int) {
		p.Refused, p.Reason = true, err.Error()
		var pe *permissions.ParseError
		if errors.As(err, &pe) {
			p.Reason, p.Line, p.Column = pe.Msg, pe.Line, pe.Column
		}
		return p, exitRefused
	}
	// No DevTools port is denied: run's browser speaks CDP over a pipe
	// and listens on none.
	m, _, err := a.newManager(managerOptions{deno: deno})
	if err != nil {
		p.Reason = err.Error()
		return p, exitFailed
	}
	defer m.Close()
	pl, err := m.Plan(ctx, runner.Request{Script: abs})
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return refuse(fmt.Errorf("cannot read the script: %w", err))
	case err != nil:
		p.Reason = err.Error()
		return p, exitFailed
	}
	if h := pl.Header; h != nil {
		for _, g := range h.Grants() {
			p.Grants = append(p.Grants, g.String())
		}
		for _, c := range pl.Capabilities {
			p.Capabilities = append(p.Capabilities, string(c))
		}
		p.Timeout = h.Timeout.String()
		if h.NoTimeout {
			p.Timeout = "none (runs until stopped)"
		}
		for _, d := range pl.Grants {
			p.Consent = append(p.Consent, consentLine{Risk: d.Risk.String(), Text: d.Text})
		}
		p.Approval = approval(pl)
	}
	if len(pl.Args) > 0 {
		// The bridge's port is this manager's; a run gets its own.
		bridge := m.Bridge().Addr()
		host, _, _ := strings.Cut(bridge, ":")
		p.Command = []string{"deno"}
		for _, arg := range pl.Args {
			p.Command = append(p.Command, strings.ReplaceAll(arg, bridge, host+":<bridge-port>"))
		}
	}
	if pl.Refused != nil {
		return refuse(pl.Refused)
	}
	return p, exitOK
}

// approval words the stored approval against the planned header.
func approval(pl runner.Plan) approvalStatus {
	switch {
	case pl.Header.None:
		return approvalStatus{Status: "not-needed"}
	case pl.Approval == nil:
		return approvalStatus{Status: "not-approved"}
	case pl.Approved:
		return approvalStatus{Status: "approved", ApprovedAt: pl.Approval.ApprovedAt}
	}
	st := approvalStatus{Status: "changed", ApprovedAt: pl.Approval.ApprovedAt}
	if prev, err := permissions.ParseCanonical(pl.Approval.Header); err == nil {
		d := permissions.Diff(prev, pl.Header.Grants())
		for _, g := range d.Added {
			st.Added = append(st.Added, g.String())
		}
		for _, g := range d.Removed {
			st.Removed = append(st.Removed, g.String())
		}
	}
	return st
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// openHistory opens the run history the runner keeps in the data dir.
func (a *app) openHistory() (*history.Store, error) {
	data, err := a.dataDir()
	if err != nil {
		return nil, err
	}
	return history.Open(filepath.Join(data, "history.jsonl"), history.Options{})
}

func (a *app) history(_ context.Context, args []string) int {
	fs := a.flags("history")
	asJSON := fs.Bool("json", false, "print the runs as JSON")
	n := fs.Int("n", 20, "how many runs to list")
	if _, ok := a.positional(fs, args, 0, ""); !ok {
		return exitUsage
	}
	hist, err := a.openHistory()
	if err != nil {
		fmt.Fprintf(a.stderr, "history: %s\n", safe(err.Error()))
		return exitFailed
	}
	defer hist.Close()
	runs := hist.List()
	if *n >= 0 && len(runs) > *n {
		runs = runs[:*n]
	}
	if *asJSON {
		recs := make([]record, 0, len(runs))
		for _, e := range runs {
			recs = append(recs, toRecord(e))
		}
		if err := printJSON(a.stdout, recs); err != nil {
			return exitFailed
		}
		return exitOK
	}
	if len(runs) == 0 {
		fmt.Fprintln(a.stdout, "no runs yet")
		return exitOK
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tSTATE\tTOOK\tSCRIPT\tNOTE")
	for _, e := range runs {
		note := e.FirstError
		if note == "" {
			note = e.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", e.ID, e.Start.Local().Format(time.DateTime), e.State,
			e.Duration.Round(time.Millisecond), safe(e.Script), safe(firstLine(note)))
	}
	tw.Flush()
	return exitOK
}

func (a *app) show(_ context.Context, args []string) int {
	fs := a.flags("show")
	asJSON := fs.Bool("json", false, "print the run as JSON")
	pos, ok := a.positional(fs, args, 1, "a RUN_ID")
	if !ok {
		return exitUsage
	}
	hist, err := a.openHistory()
	if err != nil {
		fmt.Fprintf(a.stderr, "show: %s\n", safe(err.Error()))
		return exitFailed
	}
	defer hist.Close()
	e, ok := hist.Get(pos[0])
	if !ok {
		var found []history.Entry
		for _, r := range hist.List() {
			if strings.HasPrefix(r.ID, pos[0]) {
				found = append(found, r)
			}
		}
		if len(found) != 1 {
			fmt.Fprintf(a.stderr, "show: %d runs match %q\n", len(found), pos[0])
			return exitFailed
		}
		e = found[0]
	}
	if *asJSON {
		if err := printJSON(a.stdout, toRecord(e)); err != nil {
			return exitFailed
		}
		return exitOK
	}
	w := a.stdout
	fmt.Fprintf(w, "script:      %s\n", safe(e.Script))
	fmt.Fprintf(w, "permissions: %s\n", safe(orNone(e.Permissions)))
	fmt.Fprintf(w, "started:     %s\n", e.Start.Local().Format(time.DateTime))
	if e.Output != "" {
		fmt.Fprintln(w, "output:")
		for _, l := range strings.Split(strings.TrimRight(e.Output, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", safeOutput(l))
		}
	}
	writeSummary(w, e)
	return exitOK
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// openConsent opens the approvals the runner keeps in the data dir.
func (a *app) openConsent() (*consent.Store, error) {
	data, err := a.dataDir()
	if err != nil {
		return nil, err
	}
	return consent.OpenStore(filepath.Join(data, "consent.json"), consent.StoreOptions{})
}

func (a *app) approvals(ctx context.Context, args []string) int {
	fs := a.flags("approvals")
	asJSON := fs.Bool("json", false, "print the approvals as JSON")
	if _, ok := a.positional(fs, args, 0, ""); !ok {
		return exitUsage
	}
	store, err := a.openConsent()
	if err != nil {
		fmt.Fprintf(a.stderr, "approvals: %s\n", safe(err.Error()))
		return exitFailed
	}
	list, err := store.List(ctx)
	if err != nil {
		fmt.Fprintf(a.stderr, "approvals: %s\n", safe(err.Error()))
		return exitFailed
	}
	if *asJSON {
		type out struct {
			Script     string    `json:"script"`
			Header     string    `json:"header"`
			ApprovedAt time.Time `json:"approvedAt"`
		}
		recs := make([]out, 0, len(list))
		for _, ap := range list {
			recs = append(recs, out{ap.Script, ap.Header, ap.ApprovedAt})
		}
		if err := printJSON(a.stdout, recs); err != nil {
			return exitFailed
		}
		return exitOK
	}
	if len(list) == 0 {
		fmt.Fprintln(a.stdout, "no approvals")
	}
	for _, ap := range list {
		fmt.Fprintf(a.stdout, "%s\n  approved %s: %s\n", safe(ap.Script), ap.ApprovedAt.Local().Format(time.DateTime), safe(ap.Header))
	}
	return exitOK
}

func (a *app) revoke(ctx context.Context, args []string) int {
	fs := a.flags("revoke")
	pos, ok := a.positional(fs, args, 1, "a SCRIPT")
	if !ok {
		return exitUsage
	}
	store, err := a.openConsent()
	if err != nil {
		fmt.Fprintf(a.stderr, "revoke: %s\n", safe(err.Error()))
		return exitFailed
	}
	key, err := consent.ScriptKey(pos[0])
	if err != nil {
		fmt.Fprintf(a.stderr, "revoke: %s\n", safe(err.Error()))
		return exitFailed
	}
	had, err := store.Revoke(ctx, key)
	if err != nil {
		fmt.Fprintf(a.stderr, "revoke: %s\n", safe(err.Error()))
		return exitFailed
	}
	if !had {
		fmt.Fprintf(a.stderr, "%s had no approval\n", safe(key))
		return exitFailed
	}
	fmt.Fprintf(a.stdout, "revoked the approval of %s; its next run asks again\n", safe(key))
	return exitOK
}

// doctorOut is what doctor finds.
type doctorOut struct {
	Deno            string   `json:"deno"`
	DenoVersion     string   `json:"denoVersion,omitempty"`
	Chromium        string   `json:"chromium"`
	ChromiumVersion string   `json:"chromiumVersion,omitempty"`
	DataDir         string   `json:"dataDir"`
	DataDirMissing  bool     `json:"dataDirMissing,omitempty"`
	CacheDir        string   `json:"cacheDir"`
	SDKDir          string   `json:"sdkDir,omitempty"`
	SDKHash         string   `json:"sdkHash,omitempty"`
	SDKVersion      string   `json:"sdkVersion"`
	CacheWarm       bool     `json:"cacheWarm"`
	Problems        []string `json:"problems,omitempty"`
}

func (a *app) doctor(ctx context.Context, args []string) int {
	fs := a.flags("doctor")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	denoFlag := fs.String("deno", "", "the deno executable")
	browserFlag := fs.String("browser", "", "the Chromium executable")
	if _, ok := a.positional(fs, args, 0, ""); !ok {
		return exitUsage
	}
	d := doctorOut{SDKVersion: runner.SDKVersion}
	problem := func(format string, args ...any) { d.Problems = append(d.Problems, fmt.Sprintf(format, args...)) }
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()

	deno, _, err := findDeno(*denoFlag)
	if err != nil {
		problem("%v", err)
	} else {
		d.Deno = deno
		if d.DenoVersion, err = version(ctx, deno); err != nil {
			problem("deno at %s does not run: %v", deno, err)
		}
	}
	chromium, err := findChromium(*browserFlag)
	if err != nil {
		problem("%v", err)
	} else {
		d.Chromium = chromium
		if d.ChromiumVersion, err = version(ctx, chromium); err != nil {
			problem("chromium at %s does not run: %v", chromium, err)
		}
	}
	// doctor looks and creates nothing: the SDK is laid down, and the run
	// manager opened, in a scratch directory it removes.
	scratch, err := os.MkdirTemp("", "tranquil-doctor-")
	if err != nil {
		problem("no scratch directory: %v", err)
	} else {
		defer os.RemoveAll(scratch)
	}
	if d.DataDir, err = a.dataDir(); err != nil {
		problem("%v", err)
	} else if scratch != "" {
		if _, err := os.Stat(d.DataDir); errors.Is(err, os.ErrNotExist) {
			d.DataDirMissing = true
		}
		d.CacheDir = denoCacheDir()
		if d.CacheDir == "" {
			d.CacheDir = filepath.Join(d.DataDir, "deno-cache")
		}
		sdk, err := runner.MaterializeSDK(filepath.Join(scratch, "sdk"))
		if err != nil {
			problem("the SDK cannot be written: %v", err)
		} else {
			d.SDKDir = filepath.Join(d.DataDir, "sdk", filepath.Base(sdk.Dir)) // where a run lays it down
			d.SDKHash = strings.TrimPrefix(filepath.Base(sdk.Dir), "sdk-")
		}
	}
	if _, err := os.Stat(d.CacheDir); d.Deno != "" && scratch != "" && d.CacheDir != "" && err == nil {
		// The runner asks deno itself, offline, whether a run would
		// download anything; a cache that does not exist yet is cold.
		m, _, err := a.newManager(managerOptions{deno: *denoFlag, dataDir: filepath.Join(scratch, "data"), cacheDir: d.CacheDir})
		if err != nil {
			problem("the run manager cannot start: %v", err)
		} else {
			if d.CacheWarm, err = m.CacheWarm(ctx); err != nil {
				problem("the deno cache cannot be checked: %v", err)
			}
			m.Close()
		}
	}

	if *asJSON {
		if err := printJSON(a.stdout, d); err != nil {
			return exitFailed
		}
	} else {
		w := a.stdout
		fmt.Fprintf(w, "deno:        %s %s\n", orNone(d.Deno), d.DenoVersion)
		fmt.Fprintf(w, "chromium:    %s %s\n", orNone(d.Chromium), d.ChromiumVersion)
		if d.DataDirMissing {
			fmt.Fprintf(w, "data dir:    %s (not created yet: the first run makes it)\n", d.DataDir)
		} else {
			fmt.Fprintf(w, "data dir:    %s\n", d.DataDir)
		}
		fmt.Fprintf(w, "deno cache:  %s\n", d.CacheDir)
		fmt.Fprintf(w, "sdk:         %s (version %s, hash %s)\n", d.SDKDir, d.SDKVersion, d.SDKHash)
		if d.CacheWarm {
			fmt.Fprintln(w, "cache:       warm (runs start without downloading)")
		} else {
			fmt.Fprintln(w, "cache:       cold (the first run downloads the SDK's dependency)")
		}
		for _, p := range d.Problems {
			fmt.Fprintf(w, "problem:     %s\n", p)
		}
	}
	if len(d.Problems) > 0 {
		return exitFailed
	}
	return exitOK
}

// version runs a tool with --version and returns the first line.
func version(ctx context.Context, path string) (string, error) {
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(firstLine(string(out))), nil
}
