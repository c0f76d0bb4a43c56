package traceview

import "github.com/tranquil/automation/history"

// listPage is the run list, filtered to one state or not.
type listPage struct {
	// State is the state shown, "" for every run.
	State  string
	States []stateLink
	Total  int
	Runs   []listRow
}

// stateLink is a filter the list offers: a state some run is in.
type stateLink struct {
	State   history.State
	Count   int
	Current bool
}

// listRow is one run in the list.
type listRow struct {
	history.Entry
	// Why is the first error, or the reason when there is none, cut short.
	Why string
}

// maxWhy bounds the list's why; the run page has it all.
const maxWhy = 240

// stateOrder is the order the list's filters come in: the live states,
// then how runs end.
var stateOrder = []history.State{
	history.StatePreparing, history.StateQueued, history.StateStarting, history.StateRunning,
	history.StateFailed, history.StateTimedOut, history.StateCancelled, history.StateRefused, history.StateSucceeded,
}

// newListPage keeps the runs in state, or all when state is "". The
// filter is the query's: links, not a form, so the page needs no script.
func newListPage(runs []history.Entry, state string) listPage {
	p := listPage{State: state, Total: len(runs)}
	counts := map[history.State]int{}
	for _, e := range runs {
		counts[e.State]++
		if state != "" && string(e.State) != state {
			continue
		}
		why := e.FirstError
		if why == "" {
			why = e.Reason
		}
		p.Runs = append(p.Runs, listRow{Entry: e, Why: cutEnd(why, maxWhy)})
	}
	for _, s := range stateOrder {
		if counts[s] > 0 || string(s) == state {
			p.States = append(p.States, stateLink{State: s, Count: counts[s], Current: string(s) == state})
		}
	}
	return p
}
