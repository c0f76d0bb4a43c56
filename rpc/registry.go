package rpc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tranquil/automation/permissions"
)

// Factory builds a capability's object for one session. The principal says
// which run is calling. The returned object is exported over Cap'n Web: a
// struct pointer whose exported methods become callable, or a
// [capnweb.Handler].
type Factory func(ctx context.Context, p Principal) (any, error)

// ErrDuplicate reports a capability registered twice.
var ErrDuplicate = errors.New("rpc: capability already registered")

type registration struct {
	factory   Factory
	audiences []Audience
}

// Registry maps capability names to factories and audiences. It is safe
// for concurrent use. The zero value is empty and ready.
type Registry struct {
	mu   sync.RWMutex
	caps map[permissions.Capability]registration
}

// Register adds capability name. With no audiences it is exposed to
// AudienceWebview only; runners see it only when AudienceRunner is listed.
func (r *Registry) Register(name permissions.Capability, f Factory, audiences ...Audience) error {
	if !capName(string(name)) || f == nil {
		return fmt.Errorf("rpc: invalid registration of %q", name)
	}
	if len(audiences) == 0 {
		audiences = []Audience{AudienceWebview}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.caps[name]; dup {
		return fmt.Errorf("%w: %s", ErrDuplicate, name)
	}
	if r.caps == nil {
		r.caps = map[permissions.Capability]registration{}
	}
	r.caps[name] = registration{factory: f, audiences: slices.Clone(audiences)}
	return nil
}

// lookup returns the factory of name if it is registered for a.
func (r *Registry) lookup(name permissions.Capability, a Audience) (Factory, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	reg, ok := r.caps[name]
	if !ok || !slices.Contains(reg.audiences, a) {
		return nil, false
	}
	return reg.factory, true
}
