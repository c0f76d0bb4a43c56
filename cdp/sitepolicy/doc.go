// Package sitepolicy is what a browser tab may show and touch, decided
// from addresses alone: whether a page is on a script's sites, whether a
// document or a navigation is one a script may act in or start, and which
// grant a page on this computer or the local network still needs.
//
// It is pure: no browser, no lookup, no I/O. Package cdp applies these
// rules to live tabs (cdp.SiteAllowed, cdp.CheckNavigation,
// cdp.CheckAllowLocal and cdp.LocalGrant are its wrappers), and the rules
// test and fuzz here without Chromium. The sites= matching itself is
// internal/sitematch's, which the offline testing kit shares.
package sitepolicy
