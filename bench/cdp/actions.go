package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/tranquil/automation/cdp"
)

// formPage is the page every form action is measured on. Each control can
// be found by its label (or role and name) and by a test id.
const formPage = `<!doctype html><title>bench</title>
<form onsubmit="return false">
<label for=email>Email</label><input id=email type=email data-testid=email>
<label for=name>Name</label><input id=name>
<label><input type=checkbox id=agree data-testid=agree> I agree</label>
<label for=country>Country</label><select id=country data-testid=country>
<option value="">Choose</option><option value=fr>France</option><option value=de>Germany</option></select>
<button type=button data-testid=save onclick="this.dataset.clicks = (+this.dataset.clicks || 0) + 1">Save</button>
</form>`

// actions are the form actions measured, in the order printed.
var actions = []string{"fill", "check", "select", "click"}

// ourActions runs each action the way a script names its target: by label
// (the button by role and name), and by test id.
func ourActions(ctx context.Context, tab *cdp.Tab) map[string]func(i int) error {
	byLabel := map[string]cdp.Locator{
		"fill": {Label: "Email"}, "check": {Label: "I agree"}, "select": {Label: "Country"}, "click": {Role: "button", Name: "Save"},
	}
	byID := map[string]cdp.Locator{
		"fill": {TestID: "email"}, "check": {TestID: "agree"}, "select": {TestID: "country"}, "click": {TestID: "save"},
	}
	out := map[string]func(int) error{}
	for finder, targets := range map[string]map[string]cdp.Locator{"label": byLabel, "testId": byID} {
		out["fill "+finder] = func(i int) error {
			v := []string{"grace@example.org", "ada@example.com"}[i%2]
			st, err := tab.Fill(ctx, targets["fill"], v, cdp.FormOptions{})
			if err == nil && st.Value != v {
				err = fmt.Errorf("fill kept %q", st.Value)
			}
			return err
		}
		out["check "+finder] = func(i int) error { return tab.Check(ctx, targets["check"], i%2 == 0, cdp.FormOptions{}) }
		out["select "+finder] = func(i int) error {
			_, err := tab.Select(ctx, targets["select"], []string{"Germany", "France"}[i%2], cdp.FormOptions{})
			return err
		}
		out["click "+finder] = func(int) error { return tab.ClickElement(ctx, targets["click"], cdp.FormOptions{}) }
	}
	return out
}

// benchActions measures fill, check, select and click, ours against
// Playwright's locators on the same page, in rounds that alternate who
// goes first so machine load hits both alike; each round warms up first.
func benchActions(ctx context.Context, tab *cdp.Tab, chromium, url string, n, rounds int) {
	const warm = 10
	ours := map[string][]time.Duration{}
	pw := map[string][]time.Duration{}
	run := ourActions(ctx, tab)
	per := max(n/rounds, 1)
	for r := 0; r < rounds; r++ {
		mine := func() {
			for _, finder := range []string{"label", "testId"} {
				for _, a := range actions {
					key := a + " " + finder
					for i := 0; i < warm+per; i++ {
						t0 := time.Now()
						check(run[key](i))
						if i >= warm {
							ours[key] = append(ours[key], time.Since(t0))
						}
					}
				}
			}
		}
		theirs := func() {
			got, err := playwrightActions(ctx, chromium, url, per, warm)
			check(err)
			for k, v := range got {
				pw[k] = append(pw[k], v...)
			}
		}
		if r%2 == 0 {
			mine()
			theirs()
		} else {
			theirs()
			mine()
		}
	}
	fmt.Printf("Form actions p50 (same page, each on a browser it launched over a pipe, %d rounds alternating):\n", rounds)
	fmt.Printf("  %-22s %10s %12s\n", "", "ours", "playwright")
	for _, finder := range []string{"label", "testId"} {
		for _, a := range actions {
			key := a + " " + finder
			fmt.Printf("  %-22s %7.1f ms %9.1f ms\n", a+" by "+finder, ms(p50(ours[key])), ms(p50(pw[key])))
		}
	}
	for _, finder := range []string{"label", "testId"} {
		for _, a := range actions {
			key := a + " " + finder
			fmt.Printf("  ratio ours/playwright %-13s %.2f  (target ≤ 1.00)\n", key, float64(p50(ours[key]))/float64(p50(pw[key])))
		}
	}
}

func playwrightActions(ctx context.Context, chromium, url string, n, warm int) (map[string][]time.Duration, error) {
	flags, err := json.Marshal(benchFlags())
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", "pw_actions.mjs", chromium, url, fmt.Sprint(n), fmt.Sprint(warm), string(flags))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("playwright: %w", err)
	}
	var msByKey map[string][]float64
	if err := json.Unmarshal(out, &msByKey); err != nil {
		return nil, fmt.Errorf("playwright output %q: %w", out, err)
	}
	res := map[string][]time.Duration{}
	for k, ms := range msByKey {
		for _, m := range ms {
			res[k] = append(res[k], time.Duration(m*float64(time.Millisecond)))
		}
	}
	return res, nil
}
