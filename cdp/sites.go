package cdp

import (
	"net/url"

	"github.com/tranquil/automation/internal/sitematch"
)

// How a page's address is matched against a script's sites= ([SiteAllowed]):
// package sitematch holds the rule, pure, so that the offline testing kit
// (compiled to WebAssembly) applies it too. These names keep cdp's callers
// as they were.

func matchSites(rawURL string, sites []string, wildcards bool) bool {
	return sitematch.Match(rawURL, sites, wildcards)
}

func portOf(u *url.URL) int { return sitematch.PortOf(u) }

func splitSite(site string) (host string, port int, ok bool) { return sitematch.Split(site) }

func validHost(h string) bool { return sitematch.ValidHost(h) }

func hostOf(rawURL string) string { return sitematch.HostOf(rawURL) }
func normHost(h string) string    { return sitematch.NormHost(h) }
