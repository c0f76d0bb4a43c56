package rpc

import (
	"github.com/tranquil/automation/permissions"
)

// Audience names a kind of RPC caller. A capability is exposed only to the
// audiences it was registered for.
type Audience string

const (
	// AudienceWebview is the default audience: trusted guest pages of the
	// host.
	AudienceWebview Audience = "webview"
	// AudienceRunner is a script run presenting a one-time run token.
	// Exposure to it is opt-in.
	AudienceRunner Audience = "runner"
)

// Principal is who a session speaks for: one script run. It is bound to a
// token by [Bridge.Mint] and handed to every capability factory.
type Principal struct {
	RunID      string
	ScriptPath string
	ScriptDir  string
	// Permitted lists the capabilities the run's approved header allows
	// (see permissions.Header.Capabilities). The session grants the subset
	// the SDK declares it implements.
	Permitted []permissions.Capability
	// Audience is the caller kind; empty means AudienceRunner.
	Audience Audience
}

func (p Principal) audience() Audience {
	if p.Audience == "" {
		return AudienceRunner
	}
	return p.Audience
}
