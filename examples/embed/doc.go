// Package embed holds the README's "embed it in your host" example as a
// runnable Example, so that the wiring it shows keeps compiling and working:
// a runner.Manager with the host's Tabs, UI, Clipboard and Workspace, and a
// consent.Gate asking the host's Prompter.
//
// The package has no API of its own; read example_test.go.
package embed
