// Package rpc is the bridge between a host window and the script runs it
// starts: an authenticated loopback WebSocket server speaking Cap'n Web.
//
//   - [New] starts a [Bridge] on 127.0.0.1; [Bridge.RunURL] is what a
//     run dials, [Bridge.Close] ends everything and waits.
//   - [Bridge.Mint] makes a one-time token for a run's [Principal];
//     [Bridge.Revoke] invalidates it and ends the run's live session.
//   - [Registry.Register] makes a capability available to an [Audience].
//
// # Connection sequence
//
// The upgrade request must be a GET of [DefaultPath], or of a run's route
// below it ([Bridge.RunURL]), whose Host is exactly
// this listener (127.0.0.1:<port> or localhost:<port>) and which carries no
// Origin, Referer or Sec-Fetch-* header: browsers always send one of these
// and Deno sends none, so web pages (including DNS-rebinding ones) cannot
// get in. Then the client's first frame, within [Config.HandshakeTimeout]
// (3 s), must be text of at most [MaxHandshakeFrame] bytes:
//
//	AUTH <64 hex digits> {"protocol":1,"sdk":"<version>","capabilities":[…]}
//
// The bridge answers with one of:
//
//	OK {"protocol":1,"granted":[…]}     then Cap'n Web runs on the socket
//	DENY {"reason":…,"missing":[…],"sdk":…}   then close code 4001
//
// Granted is the SDK's declared capabilities ∩ those the run's approved
// header permits ∩ those registered for the principal's audience: exactly
// the properties the session's main object has. If the header permits a capability the SDK does not
// implement (a stale SDK), the run is denied, not degraded; the SDK must
// treat DENY as fatal and never retry. Any other failure closes with 1008
// and the reason "authentication failed"; the real reason goes to the host
// log only. No frame reaches Cap'n Web before OK.
//
// The main object of the session has one property per granted capability
// registered for the principal's audience ([AudienceRunner] is opt-in).
// Any other name reads as undefined: an ungranted capability is absent,
// not present and refusing. The granted set lives on the session alone.
//
// # Tokens
//
// A token is 32 bytes from crypto/rand, hex-encoded to a fixed 64
// characters. The bridge keeps only its SHA-256, compares against every
// entry in constant time, and deletes it on the first claim, so under
// concurrent claims exactly one wins. An unclaimed token expires after
// [Config.TokenTTL] (60 s). Hand tokens to runs through the environment,
// never a URL or argv.
//
// # Limits
//
// After OK a frame may be up to [Config.ReadLimit] (32 MiB, room for
// screenshots). [Config.MaxSessions] bounds authenticated sessions (a busy
// refusal closes with 1013 and leaves the token usable),
// [Config.MaxInFlight] bounds each session's concurrent calls, and two
// bounds cover connections still in the handshake. Each run dials its own
// route, <DefaultPath>/<32 hex digits> derived one-way from its token; a
// route of no unclaimed token is refused before the upgrade, and the AUTH
// frame on a route must carry its token. [Config.MaxPendingPerRun] (4)
// bounds one route's pending handshakes, [Config.MaxPending] (256) those
// on the shared path; when either is full, the oldest of that kind alone
// is dropped. So silent clients cannot lock out a real one, and a flood
// from one script, which knows no other run's route and whose own route
// died with its claimed token, can never evict another run's handshake.
//
// # Latency
//
// Every connection acknowledges at once the frames it has no reply for
// (package rpc/wsconn: TCP_QUICKACK on Linux, an unsolicited pong
// elsewhere), so a client that leaves Nagle's algorithm on (Deno's
// WebSocket) does not stall 40 ms per call. The bridge speaks plain RFC 6455 framing: an SDK that
// sets TCP_NODELAY on its own socket and frames WebSocket messages itself
// needs nothing else from the bridge.
package rpc
