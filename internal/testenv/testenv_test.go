package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDenoFound(t *testing.T) {
	p := Deno(t)
	if !filepath.IsAbs(p) {
		t.Fatalf("deno path %q is not absolute", p)
	}
}

func TestChromiumFound(t *testing.T) {
	p := Chromium(t)
	if !filepath.IsAbs(p) {
		t.Fatalf("chromium path %q is not absolute", p)
	}
}

func TestEnvOverrideMustBeExecutable(t *testing.T) {
	t.Setenv("TRANQUIL_DENO", filepath.Join(t.TempDir(), "missing-deno"))
	_, err := LookDeno()
	if err == nil || !strings.Contains(err.Error(), "TRANQUIL_DENO") {
		t.Fatalf("want an error naming TRANQUIL_DENO, got %v", err)
	}
}

func TestEnvOverrideWins(t *testing.T) {
	p := filepath.Join(t.TempDir(), "deno")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TRANQUIL_DENO", p)
	got, err := LookDeno()
	if err != nil || got != p {
		t.Fatalf("LookDeno = %q, %v; want %q", got, err, p)
	}
}

func TestRepoRoot(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		t.Fatalf("repo root %s has no Makefile: %v", root, err)
	}
}
