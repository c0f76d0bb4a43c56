package hosttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tranquil/automation/internal/netclass"
	"github.com/tranquil/automation/internal/sitematch"
)

// ErrBadSite reports a Script.Sites key that is not a web host name in
// lower-case ASCII (letters, digits, '-' and '.'; punycode for others): an
// address, a name with a port or a wildcard, or a local name (localhost,
// *.local, a single word); or a Sites entry with no pages.
var ErrBadSite = errors.New("hosttest: a Sites key must be a web host name such as example.com")

// ErrBadStart reports a Script.Start that is neither a path on Pages nor
// an https:// address.
var ErrBadStart = errors.New("hosttest: Start must be a path on Pages or an https:// address on Sites")

// namedSites is a run's Script.Sites being served: one https server on a
// 127.0.0.1 port for every name, and the browser flags that send those
// names there and trust its certificate.
type namedSites struct {
	names []string // sorted
	args  []string // the browser's flags
	stop  func()
}

// checkSiteNames reports the first key of sites that is not a web host
// name, wrapping ErrBadSite.
func checkSiteNames(sites map[string]fs.FS) error {
	for name, pages := range sites {
		// The name goes into the browser's flags and the pages' CSP as it
		// is, so it may hold nothing but a name's own characters.
		plain := strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789-.") == ""
		class, lookup := netclass.Host(name)
		if pages == nil || !plain || class != netclass.Public || !lookup || !sitematch.ValidHost(name) {
			return fmt.Errorf("%w: %q", ErrBadSite, name)
		}
	}
	return nil
}

// serveSites serves sites over https on one 127.0.0.1 port, each under
// its name, with a certificate made here for those names.
func serveSites(sites map[string]fs.FS) (*namedSites, error) {
	if err := checkSiteNames(sites); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(sites))
	for name := range sites {
		names = append(names, name)
	}
	slices.Sort(names)
	cert, spki, err := siteCertificate(names)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("hosttest: serving the sites: %w", err)
	}
	files := map[string]http.Handler{}
	for name, pages := range sites {
		files[name] = http.FileServerFS(pages)
	}
	csp := sitesCSP(names)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := files[strings.ToLower(hostOnly(r.Host))]
			if h == nil {
				http.Error(w, "no such site", http.StatusMisdirectedRequest)
				return
			}
			w.Header().Set("Content-Security-Policy", csp)
			h.ServeHTTP(w, r)
		}),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		// A browser that gives up on a connection is no failure of the
		// test's; the run's own record says what the pages did.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeTLS(ln, "", "") // returns when stop closes the server
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	return &namedSites{
		names: names,
		args:  siteFlags(names, port, spki),
		stop: func() {
			srv.Close()
			<-done
		},
	}, nil
}

// siteFlags are the flags that make this run's browser reach names on
// the test's port: each name's https port maps to it, every other name
// fails to resolve (so neither a page nor the browser looks anything up),
// 127.0.0.1 stays itself for Script.Pages, and the certificate is trusted
// by its key, in this browser only, rather than every certificate being
// accepted.
func siteFlags(names []string, port int, spki string) []string {
	var maps []string
	for _, n := range names {
		maps = append(maps, fmt.Sprintf("MAP %s:443 127.0.0.1:%d", n, port))
	}
	return []string{resolverRules(maps...), "--ignore-certificate-errors-spki-list=" + spki}
}

// resolverRules is the flag that makes every name but those maps send to
// loopback fail inside the browser, so it looks nothing up, while
// 127.0.0.1 stays itself for Script.Pages.
func resolverRules(maps ...string) string {
	return "--host-resolver-rules=" + strings.Join(append(maps, "MAP * ~NOTFOUND", "EXCLUDE 127.0.0.1"), ", ")
}

// sitesCSP is pagesCSP widened to the named sites, so their pages may
// load from and post to one another and nothing else.
func sitesCSP(names []string) string {
	origins := make([]string, len(names))
	for i, n := range names {
		origins[i] = "https://" + n
	}
	o := strings.Join(origins, " ")
	return "default-src 'self' 'unsafe-inline' data: " + o + "; form-action 'self' " + o
}

// siteCertificate makes a self-signed certificate for names, and the
// base64 SHA-256 of its public key (the form Chromium pins).
func siteCertificate(names []string) (tls.Certificate, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("hosttest: the sites' key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		// An hour either side covers a clock that steps during a run.
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("hosttest: the sites' certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, "", fmt.Errorf("hosttest: the sites' certificate: %w", err)
	}
	sum := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, base64.StdEncoding.EncodeToString(sum[:]), nil
}

// hostOnly is a Host header without its port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}
