package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/tranquil/automation/permissions"
)

// ProtocolVersion is the handshake protocol this bridge speaks.
const ProtocolVersion = 1

// MaxHandshakeFrame bounds the AUTH frame.
const MaxHandshakeFrame = 4096

// Hello is what the SDK says about itself in its AUTH frame.
type Hello struct {
	Protocol     int                      `json:"protocol"`
	SDK          string                   `json:"sdk"`
	Capabilities []permissions.Capability `json:"capabilities"`
}

// ErrHandshake reports a malformed AUTH frame.
var ErrHandshake = errors.New("rpc: malformed handshake")

// ParseAuth parses "AUTH <token> <hello-json>". It checks the shape of
// everything and the token's length and alphabet, not the token itself.
func ParseAuth(frame []byte) (token string, hello Hello, err error) {
	if len(frame) > MaxHandshakeFrame {
		return "", Hello{}, fmt.Errorf("%w: frame of %d bytes exceeds %d", ErrHandshake, len(frame), MaxHandshakeFrame)
	}
	rest, ok := bytes.CutPrefix(frame, []byte("AUTH "))
	if !ok {
		return "", Hello{}, fmt.Errorf("%w: does not start with AUTH", ErrHandshake)
	}
	tok, js, ok := bytes.Cut(rest, []byte(" "))
	if !ok {
		return "", Hello{}, fmt.Errorf("%w: no hello after the token", ErrHandshake)
	}
	if len(tok) != TokenLen || !isLowerHex(tok) {
		return "", Hello{}, fmt.Errorf("%w: token is not %d hex digits", ErrHandshake, TokenLen)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	if err := dec.Decode(&hello); err != nil {
		return "", Hello{}, fmt.Errorf("%w: hello: %v", ErrHandshake, err)
	}
	if dec.More() {
		return "", Hello{}, fmt.Errorf("%w: trailing data after hello", ErrHandshake)
	}
	if hello.Protocol != ProtocolVersion {
		return "", Hello{}, fmt.Errorf("%w: protocol %d, this bridge speaks %d", ErrHandshake, hello.Protocol, ProtocolVersion)
	}
	if len(hello.SDK) == 0 || len(hello.SDK) > 64 || !printable(hello.SDK) {
		return "", Hello{}, fmt.Errorf("%w: sdk version %q", ErrHandshake, hello.SDK)
	}
	if len(hello.Capabilities) > 64 {
		return "", Hello{}, fmt.Errorf("%w: %d capabilities declared", ErrHandshake, len(hello.Capabilities))
	}
	for _, c := range hello.Capabilities {
		if !capName(string(c)) {
			return "", Hello{}, fmt.Errorf("%w: capability name %q", ErrHandshake, c)
		}
	}
	slices.Sort(hello.Capabilities)
	hello.Capabilities = slices.Compact(hello.Capabilities)
	return string(tok), hello, nil
}

func isLowerHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func capName(s string) bool {
	if s == "" || len(s) > 64 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Accepted is the body of the bridge's OK reply.
type Accepted struct {
	Protocol int                      `json:"protocol"`
	Granted  []permissions.Capability `json:"granted"`
}

// Denied is the body of the bridge's DENY reply: the capabilities the
// script's header needs that the SDK does not implement.
type Denied struct {
	Reason  string                   `json:"reason"`
	Missing []permissions.Capability `json:"missing"`
	SDK     string                   `json:"sdk"`
}

// negotiate grants declared ∩ permitted, or lists what the header needs
// and the SDK lacks.
func negotiate(p Principal, h Hello) (granted, missing []permissions.Capability) {
	for _, c := range p.Permitted {
		if slices.Contains(h.Capabilities, c) {
			granted = append(granted, c)
		} else {
			missing = append(missing, c)
		}
	}
	slices.Sort(granted)
	slices.Sort(missing)
	return granted, missing
}
