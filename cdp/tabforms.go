package cdp

import (
	"context"
	"encoding/json"

	"github.com/mafredri/cdp/protocol/runtime"

	"github.com/tranquil/automation/errcode"
)

// The tab's side of [core]: what the form runtime may ask of the page.

var _ core = (*Tab)(nil)

func (t *Tab) callWorld(ctx context.Context, fr, fn string, args []runtime.CallArgument) (json.RawMessage, error) {
	return t.callIn(ctx, fr, sdkWorld, fn, args, false)
}

// world returns frame fr's isolated world once the tab's sites allow the
// realm, and only if it is still the frame's world after that check.
func (t *Tab) world(ctx context.Context, fr string) (realmRef, error) {
	rm, err := t.realmIn(ctx, fr, sdkWorld, "")
	if err != nil {
		return realmRef{}, err
	}
	if err := t.checkRealmIn(ctx, fr, rm.origin); err != nil {
		return realmRef{}, err
	}
	cur, _, ok, _ := t.frames.realm(fr, sdkWorld)
	if !ok || cur.uid != rm.uid || rm.id == 0 {
		return realmRef{}, &LocatorError{Code: errcode.StaleRef, Message: "the page changed while the target was looked up; try again"}
	}
	return rm, nil
}

func (t *Tab) frameOrigin(fr string) string { return addressOf(t.frameURL(fr)) }

func (t *Tab) click(ctx context.Context, fr string, x, y float64, landed func(ctx context.Context) error) error {
	if landed == nil {
		return t.clickIn(ctx, fr, x, y)
	}
	t.forgetRefusals(fr)
	if err := t.clickIn(ctx, fr, x, y); err != nil {
		return err
	}
	return t.clickNavigationRefused(fr, landed(ctx))
}

func (t *Tab) goTask(name string, f func(ctx context.Context)) { t.tasks.Go(name, f) }
