// Package netclass says whether an address or a host name is on this
// computer, on the local network, or elsewhere, by its text alone.
//
//   - [Addr] grades an IP address: loopback (127.0.0.0/8, ::1, and the
//     unspecified 0.0.0.0/8 and ::, which reach this computer too), local
//     network (10/8, 172.16/12, 192.168/16, 100.64/10 shared address space,
//     169.254/16 and fe80::/10 link-local, fc00::/7 unique local), or public.
//   - [Host] grades a host as a URL or a grant writes it: an IP literal by
//     its address, in every form a browser reads as one ([Canonical]:
//     127.1, 2130706433, 0x7f000001, [::ffff:127.0.0.1]); localhost and *.localhost as loopback; single-label
//     names and the names only a local network answers (.local, .internal,
//     .lan, .home.arpa) as local network; any other name as public, with
//     Lookup set, since only DNS can tell where it points.
//
// Both the consent wording (package permissions) and the page gateway
// (package cdp) grade addresses here, so that what a prompt calls "this
// computer" is what the browser refuses.
package netclass
