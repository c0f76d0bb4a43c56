package hosttest

import (
	"context"
	"fmt"

	"github.com/tranquil/automation/runner"
)

// Live is a run in progress, handed to [Script.During]: what a person at
// the app's pane could do to it while it runs.
type Live struct {
	m   *runner.Manager
	run *runner.Run
}

// Controls lists the names of the pane controls the run has registered
// so far, sorted.
func (l *Live) Controls() []string {
	var names []string
	for _, c := range l.m.PaneControls() {
		if c.RunID == l.run.ID() {
			names = append(names, c.Name)
		}
	}
	return names
}

// Click calls the run's pane control name, as a click on its button
// does, and returns what the control returned (JSON data: a string, a
// float64, a map…).
func (l *Live) Click(ctx context.Context, name string) (any, error) {
	v, err := l.m.InvokePaneControl(ctx, l.run.ID(), name)
	if err != nil {
		return nil, fmt.Errorf("hosttest: clicking %q: %w", name, err)
	}
	return v, nil
}

// Cancel stops the run as the pane's Stop button does: the script's
// context.signal aborts with reason, and the run ends cancelled.
func (l *Live) Cancel(reason string) { l.run.Cancel(reason) }
