package cdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tranquil/automation/errcode"
)

// Pop-up pickers: a button that opens a dialog, popover, sheet or menu of
// choices, built when it opens (Ionic's ion-select in each of its forms, a
// menu button). They hold no options to read before they open, so a
// person's way is the only way: open it, click the choice, confirm when
// the dialog asks, and read the widget again.

// popupChoiceRoles are the roles a pop-up's choices take, in the order
// they are looked for.
var popupChoiceRoles = []string{"radio", "option", "menuitemradio", "menuitem", "button"}

// popupReopenAfter is how long a pop-up may take to show its choices
// before the picker is checked for having opened at all.
const popupReopenAfter = 1500 * time.Millisecond

// popupConfirm are the names of the buttons that close a dialog of
// choices with the choice kept.
var popupConfirm = []string{"OK", "Done", "Confirm", "Select", "Apply"}

// choosePopup chooses option in the pop-up picker loc names, and returns
// what the picker shows afterwards. It is errcode.NotSelect when loc is not
// a button that opens a pop-up.
func (fm *forms) choosePopup(ctx context.Context, loc Locator, option string) (string, error) {
	desc := loc.String()
	trigger, err := fm.Resolve(ctx, loc)
	if err != nil {
		return "", err
	}
	st, err := fm.axStateOf(ctx, trigger.frame, desc, trigger.Ref)
	if err != nil {
		return "", err
	}
	if st.HasPopup == "" && st.Expanded == nil {
		return "", &LocatorError{Code: errcode.NotSelect, Target: desc, Candidates: []Candidate{trigger.Element},
			Message: "not a native select, an ARIA combobox or listbox, or a button that opens a list of choices; pass custom parts"}
	}
	if _, err := fm.clickReady(ctx, Locator{Ref: trigger.Ref}, need{Act: "click"}, nil); err != nil {
		return "", err
	}
	if err := fm.clickChoice(ctx, desc, trigger, option); err != nil {
		return "", err
	}
	return fm.popupShown(ctx, loc, trigger, option)
}

// clickChoice waits for the choice named option to show once the pop-up
// opened, and clicks it. A choice that goes before the click (the last
// pop-up of the widget still closing) is looked for again, and a pop-up
// that stays shut (its opening click came while the last one closed) is
// opened again, as a person would.
func (fm *forms) clickChoice(ctx context.Context, desc string, trigger *Element, option string) error {
	opened := time.Now()
	return fm.until(ctx, false, func(ctx context.Context) error {
		if time.Since(opened) > popupReopenAfter {
			opened = time.Now()
			if st, err := fm.axStateOf(ctx, trigger.frame, desc, trigger.Ref); err == nil && st.Expanded != nil && !*st.Expanded {
				// Briefly: a pop-up that opened meanwhile covers the button.
				cctx, cancel := context.WithTimeout(ctx, time.Second)
				_, _ = fm.clickReady(cctx, Locator{Ref: trigger.Ref}, need{Act: "click"}, nil)
				cancel()
			}
		}
		for _, role := range popupChoiceRoles {
			el, err := fm.Resolve(ctx, Locator{Role: role, Name: option})
			switch {
			case err == nil:
				_, err = fm.clickReady(ctx, Locator{Ref: el.Ref}, need{Act: "click"}, nil)
				return err
			case errors.Is(err, errcode.Ambiguous):
				return err
			}
		}
		return &LocatorError{Code: errcode.NoOption, Target: desc, Message: fmt.Sprintf("no choice named %q showed once the widget opened", option)}
	})
}

// popupShown reads the picker's name until it holds the choice, pressing
// a dialog's confirming button once when the choice alone did not close
// it; the widget may re-render its button meanwhile, so a stale one is
// looked up again.
func (fm *forms) popupShown(ctx context.Context, loc Locator, trigger *Element, option string) (string, error) {
	desc := loc.String()
	tries := 0
	name, ok, err := fm.readBack(ctx, popupSettle, func(ctx context.Context) (string, bool, error) {
		tries++
		st, err := fm.axStateOf(ctx, trigger.frame, desc, trigger.Ref)
		if errors.Is(err, errcode.StaleRef) {
			if el, err := fm.Resolve(ctx, loc); err == nil {
				trigger = el
			}
			return "", false, nil
		}
		if err != nil {
			return "", false, nil // read again
		}
		if shown, ok := shownAs(st.Name, option); ok {
			return shown, true, nil
		}
		if tries == 3 {
			fm.confirmPopup(ctx)
		}
		return st.Name, false, nil
	})
	switch {
	case err != nil:
		return "", err
	case !ok:
		return name, &NotCommittedError{Target: desc, Kept: name}
	}
	return name, nil
}

// popupSettle is how long a picker's choice may take to show once
// chosen: longer than settleWait, since a dialog that asks to be
// confirmed closes only after that.
const popupSettle = 2 * time.Second

// confirmPopup presses the button that closes a dialog of choices with the
// choice kept, when there is one.
func (fm *forms) confirmPopup(ctx context.Context) {
	for _, name := range popupConfirm {
		if el, err := fm.Resolve(ctx, Locator{Role: "button", Name: name, Exact: true}); err == nil {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			_, _ = fm.clickReady(cctx, Locator{Ref: el.Ref}, need{Act: "click"}, nil)
			cancel()
			return
		}
	}
}

// shownAs finds option in a widget's name, ignoring case, and returns it
// as the name spells it.
func shownAs(name, option string) (string, bool) {
	if i := indexFold(name, option); i >= 0 {
		return name[i : i+len(option)], true
	}
	if strings.Contains(strings.ToLower(name), strings.ToLower(option)) {
		return option, true
	}
	return "", false
}
