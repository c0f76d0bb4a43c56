package cdp

import "github.com/tranquil/automation/internal/sitematch"

// Which sites a page is on is package sitepolicy's rule (over
// internal/sitematch, which the offline testing kit shares); hostOf is the
// host of an address as that rule reads it, for logs and errors.
func hostOf(rawURL string) string { return sitematch.HostOf(rawURL) }
