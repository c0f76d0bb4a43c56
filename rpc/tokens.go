package rpc

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// TokenLen is the length of every token: 32 random bytes, hex-encoded. A
// fixed length keeps comparisons constant-time.
const TokenLen = 64

// Errors of the token table. Clients never see them: every handshake
// failure looks the same from outside.
var (
	ErrTokenUnknown = errors.New("rpc: unknown, used or revoked token")
	ErrTokenExpired = errors.New("rpc: token expired unclaimed")
)

type tokenEntry struct {
	hash    [sha256.Size]byte
	route   route
	p       Principal
	expires time.Time
}

// route names the connection path of one token's run (see Bridge.RunURL):
// a one-way function of the token, so knowing it gives no way to the
// token, and 128 bits, so no one guesses another run's.
type route [16]byte

func routeFor(tok string) route {
	sum := sha256.Sum256([]byte("tranquil-rpc-route\x00" + tok))
	return route(sum[:16])
}

func (r route) String() string { return hex.EncodeToString(r[:]) }

// parseRoute reads a route's 32 lowercase hex digits.
func parseRoute(s string) (route, bool) {
	var r route
	if len(s) != 2*len(r) || !isLowerHex([]byte(s)) {
		return r, false
	}
	_, err := hex.Decode(r[:], []byte(s))
	return r, err == nil
}

// tokenTable holds hashes of unclaimed tokens, never the tokens.
type tokenTable struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries []*tokenEntry
}

func (t *tokenTable) mint(p Principal) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(raw[:])
	e := &tokenEntry{hash: sha256.Sum256([]byte(tok)), route: routeFor(tok), p: p, expires: t.now().Add(t.ttl)}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sweepLocked()
	t.entries = append(t.entries, e)
	return tok, nil
}

// claim consumes tok. Under concurrent claims of one token exactly one
// succeeds. Every entry is compared, in constant time, so the time taken
// says nothing about which entry (if any) matched.
func (t *tokenTable) claim(tok string) (Principal, error) {
	h := sha256.Sum256([]byte(tok))
	t.mu.Lock()
	defer t.mu.Unlock()
	match := -1
	for i, e := range t.entries {
		if subtle.ConstantTimeCompare(e.hash[:], h[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return Principal{}, ErrTokenUnknown
	}
	e := t.entries[match]
	t.entries = append(t.entries[:match], t.entries[match+1:]...)
	if !t.now().Before(e.expires) {
		return Principal{}, ErrTokenExpired
	}
	return e.p, nil
}

// hasRoute reports whether r belongs to an unclaimed, unexpired token. Like
// claim it compares every entry in constant time.
func (t *tokenTable) hasRoute(r route) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	found := 0
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare(e.route[:], r[:]) == 1 && now.Before(e.expires) {
			found = 1
		}
	}
	return found == 1
}

// revoke drops every unclaimed token of runID and reports how many.
func (t *tokenTable) revoke(runID string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	kept := t.entries[:0]
	for _, e := range t.entries {
		if e.p.RunID == runID {
			n++
			continue
		}
		kept = append(kept, e)
	}
	clear(t.entries[len(kept):])
	t.entries = kept
	return n
}

func (t *tokenTable) sweepLocked() {
	now := t.now()
	kept := t.entries[:0]
	for _, e := range t.entries {
		if now.Before(e.expires) {
			kept = append(kept, e)
		}
	}
	clear(t.entries[len(kept):])
	t.entries = kept
}

func (t *tokenTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}
