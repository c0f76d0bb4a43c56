package rpc

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/tranquil/automation/permissions"
	"github.com/tranquil/automation/rpc/capnweb"
)

// hostAPI is a session's main object. Its properties are exactly the
// capabilities granted to the session and registered for its audience;
// any other name reads as undefined, so an ungranted capability is absent
// rather than present and refusing. Objects are built on first use, once
// per session.
type hostAPI struct {
	p     Principal
	caps  map[permissions.Capability]Factory
	mu    sync.Mutex
	built map[permissions.Capability]*capSlot
}

type capSlot struct {
	once sync.Once
	obj  any
	err  error
}

func newHostAPI(p Principal, granted []permissions.Capability, r *Registry) *hostAPI {
	api := &hostAPI{p: p, caps: map[permissions.Capability]Factory{}, built: map[permissions.Capability]*capSlot{}}
	for _, c := range granted {
		if f, ok := r.lookup(c, p.audience()); ok {
			api.caps[c] = f
		}
	}
	return api
}

// names are the session's capabilities, sorted; never nil, so the
// handshake's list is [] rather than null.
func (h *hostAPI) names() []permissions.Capability {
	names := make([]permissions.Capability, 0, len(h.caps))
	for c := range h.caps {
		names = append(names, c)
	}
	slices.Sort(names)
	return names
}

// GetProperty implements [capnweb.Handler].
func (h *hostAPI) GetProperty(ctx context.Context, name string) (any, error) {
	c := permissions.Capability(name)
	f, ok := h.caps[c]
	if !ok {
		return nil, fmt.Errorf("%w: %s", capnweb.ErrNotFound, name)
	}
	h.mu.Lock()
	slot := h.built[c]
	if slot == nil {
		slot = &capSlot{}
		h.built[c] = slot
	}
	h.mu.Unlock()
	slot.once.Do(func() { slot.obj, slot.err = f(ctx, h.p) })
	return slot.obj, slot.err
}

// CallMethod implements [capnweb.Handler]: the main object has no methods.
func (h *hostAPI) CallMethod(_ context.Context, name string, _ []any) (any, error) {
	return nil, fmt.Errorf("%w: %s", capnweb.ErrNotFound, name)
}
