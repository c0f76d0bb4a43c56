package main

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/tranquil/automation/consent"
	"github.com/tranquil/automation/mirror"
	"github.com/tranquil/automation/runner"
)

// managerOptions is what a subcommand adds to the run manager every
// subcommand builds the same way.
type managerOptions struct {
	deno     string // the --deno flag
	host     runner.Host
	prompter consent.Prompter // nil: nobody is asked, consent is refused
	onEvent  func(runner.Event)
	// allowLocal are the local sites every run's tabs may load: the
	// folder this host serves itself (--serve).
	allowLocal []string
	// dataDir and cacheDir, when set, replace the data directory and
	// deno's cache (doctor's scratch copy, which leaves the real one be).
	dataDir, cacheDir string
}

// errNoPrompt is the answer of a command that runs nothing and so has no
// one to ask.
var errNoPrompt = errors.New("this command does not ask for consent")

// newManager builds the run manager over the data dir: the approvals in
// consent.json and, beside them, the output mirrors the user declared.
// The caller closes the manager.
func (a *app) newManager(o managerOptions) (*runner.Manager, *mirror.Store, error) {
	data, err := a.dataDir()
	if err != nil {
		return nil, nil, err
	}
	cache := denoCacheDir()
	if o.dataDir != "" {
		data, cache = o.dataDir, o.cacheDir
	}
	deno, fromPATH, err := findDeno(o.deno)
	if err != nil {
		return nil, nil, err
	}
	if fromPATH {
		deno = "" // the runner looks on PATH itself
	}
	store, err := consent.OpenStore(filepath.Join(data, "consent.json"), consent.StoreOptions{})
	if err != nil {
		return nil, nil, err
	}
	ms, err := mirror.OpenBeside(store, mirror.Options{})
	if err != nil {
		return nil, nil, err
	}
	p := o.prompter
	if p == nil {
		p = consent.PrompterFunc(func(context.Context, consent.Request) (consent.Answer, error) {
			return consent.Deny, errNoPrompt
		})
	}
	m, err := runner.New(runner.Config{
		DataDir:   data,
		CacheDir:  cache,
		DenoPath:  deno,
		AllowPATH: fromPATH,
		Host:      o.host,
		Gate:      consent.NewGate(store, p),
		Mirrors:   ms,
		OnEvent:   o.onEvent,

		AllowLocalSites: o.allowLocal,
		JSR:             a.jsr,
	})
	if err != nil {
		return nil, nil, err
	}
	return m, ms, nil
}
