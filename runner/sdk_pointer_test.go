package runner

import (
	"fmt"

	"github.com/tranquil/automation/cdp"
)

// The Go fake host's pointer verbs and bulk readers (see sdk_test.go):
// each records what it was given, as the host decoded it.

// pointerWhat words a pointer action's options for the fake's record.
func pointerWhat(o hoverOptions, button string, count int) string {
	if button == "" && count == 0 && o.Modifiers == nil && o.Position == nil {
		return "" // a plain click, recorded as before
	}
	s := fmt.Sprintf("button=%s count=%d modifiers=%v", button, count, o.Modifiers)
	if o.Position != nil {
		s += fmt.Sprintf(" at=%g,%g", o.Position.X, o.Position.Y)
	}
	return s
}

func (a *fakeFormsAPI) Dblclick(id string, target cdp.Locator, o dblclickOptions) error {
	_, err := a.action("tab.dblclick", id, target, o.formOptions, pointerWhat(o.hoverOptions, o.Button, 2))
	return err
}

func (a *fakeFormsAPI) Hover(id string, target cdp.Locator, o hoverOptions) error {
	_, err := a.action("tab.hover", id, target, o.formOptions, pointerWhat(o, "", 0))
	return err
}

func (a *fakeFormsAPI) DragTo(id string, source, target cdp.Locator, o formOptions) error {
	if err := checkTarget("tab.dragTo", target); err != nil {
		return err
	}
	_, err := a.action("tab.dragTo", id, source, o, "to "+target.String())
	return err
}

func (a *fakeFormsAPI) Focus(id string, target cdp.Locator, o formOptions) error {
	_, err := a.action("tab.focus", id, target, o, "")
	return err
}

func (a *fakeFormsAPI) Type(id string, target cdp.Locator, text string, o typeOptions) error {
	_, err := a.action("tab.type", id, target, o.formOptions, fmt.Sprintf("%q delay=%g", text, o.Delay))
	return err
}

func (a *fakeTabAPI) Texts(id string, target cdp.Locator) ([]string, error) {
	_, err := a.read("tab.texts", id, target)
	return []string{"one", "two"}, err
}

func (a *fakeTabAPI) Values(id string, target cdp.Locator) ([]string, error) {
	_, err := a.read("tab.values", id, target)
	return []string{"v1", "v2"}, err
}

func (a *fakeTabAPI) Table(id string, target cdp.Locator, o readOptions) (cdp.Table, error) {
	_, err := a.readWith("tab.table", id, target, o)
	return cdp.Table{Headers: []string{"Name"}, Rows: [][]string{{"Ada"}}}, err
}
