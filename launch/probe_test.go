package launch

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/page"
	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
	"github.com/tranquil/automation/internal/testenv"
)

// TestErrorPagesProbeNothing: when a name does not resolve, a launched
// Chromium's error page starts no DNS probe (which asks the system's and
// public DNS servers about a name of its own): it shows the plain
// ERR_NAME_NOT_RESOLVED where a probe would put DNS_PROBE_…. The name
// fails inside the browser (--host-resolver-rules), so the test itself
// looks nothing up; with the preferences left out, the probe shows, and
// sends.
func TestErrorPagesProbeNothing(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	p, err := Chromium(ctx, Options{Path: testenv.Chromium(t), TempDir: tempRoot,
		Args: []string{"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"}})
	require.NoError(t, err)
	defer p.Close()
	tab, err := p.Browser().NewTab(ctx, "")
	require.NoError(t, err)
	nav, err := tab.Client().Page.Navigate(ctx, page.NewNavigateArgs("http://nothing-here.invalid/"))
	require.NoError(t, err)
	require.NotNil(t, nav.ErrorText)
	assert.Equal(t, "net::ERR_NAME_NOT_RESOLVED", *nav.ErrorText)
	// The page says which error it shows; a probe changes it within a
	// moment of the page's load (DNS_PROBE_STARTED, then _FINISHED_…).
	text := func() string {
		r, err := tab.Client().Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(`document.body ? document.body.innerText : ""`).SetReturnByValue(true))
		if err != nil || r.ExceptionDetails != nil {
			return ""
		}
		return string(r.Result.Value)
	}
	require.Eventually(t, func() bool { return strings.Contains(text(), "ERR_") || strings.Contains(text(), "DNS_PROBE") },
		20*time.Second, 50*time.Millisecond, "the error page shows no error code")
	// A probe, once started, reports within a few seconds; a second look
	// after one error-page round trip and a pause long enough for it.
	time.Sleep(2 * time.Second)
	got := text()
	assert.Contains(t, got, "ERR_NAME_NOT_RESOLVED")
	assert.NotContains(t, got, "DNS_PROBE")
}

// TestBrowserAsksNothingOfItsOwn: a launched Chromium sends no request of
// its own (the secure-time query, component and model updates, which it
// makes within a moment of starting even with --disable-component-update)
// anywhere but loopback. Chromium's own network log over its first
// seconds, with a loopback page loaded, names no other host. Every name
// fails inside the browser (--host-resolver-rules), so a regression shows
// in the log without anything leaving the machine.
func TestBrowserAsksNothingOfItsOwn(t *testing.T) {
	t.Parallel()
	ctx := tctx(t, 60*time.Second)
	logFile := filepath.Join(t.TempDir(), "net.json")
	p, err := Chromium(ctx, Options{Path: testenv.Chromium(t), TempDir: tempRoot,
		Args: []string{"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--log-net-log=" + logFile}})
	require.NoError(t, err)
	// A page with a form (the autofill service is asked about forms) and a
	// second page reached from it.
	form := `<title>quiet</title><form action="/x" method=post><label>Name <input name=name autocomplete=name></label>
<label>Email <input name=email type=email autocomplete=email></label><label>Street <input name=street autocomplete=street-address></label>
<label>City <input name=city></label><label>Zip <input name=zip autocomplete=postal-code></label><input type=password name=pw>
<button>Go</button></form><a href="/quiet-2">on</a>`
	serve("/quiet-2", form)
	tab, err := p.Browser().NewTab(ctx, serve("/quiet", form))
	require.NoError(t, err)
	_, err = tab.Title(ctx)
	require.NoError(t, err)
	_, err = tab.Goto(ctx, serve("/quiet-2", form), cdp.Load)
	require.NoError(t, err)
	// The requests it made on its own came within a quarter second of its
	// start when they were made; two seconds more is ample.
	time.Sleep(2 * time.Second)
	require.NoError(t, p.Close()) // the log is complete once the browser is gone
	raw, err := os.ReadFile(logFile)
	require.NoError(t, err)
	hosts := netLogHosts(t, raw)
	require.Contains(t, hosts, "127.0.0.1", "the log shows the page's own request")
	for h := range hosts {
		assert.Equal(t, "127.0.0.1", h, "the browser asked for a host of its own")
	}
}

// netLogHosts lists the hosts a Chromium network log's requests and
// name lookups name.
func netLogHosts(t *testing.T, raw []byte) map[string]bool {
	t.Helper()
	// A log the browser could not finish lacks its closing brackets.
	s := strings.TrimRight(string(raw), " \n,")
	if !strings.HasSuffix(s, "]}") {
		s += "]}"
	}
	var log struct {
		Events []struct {
			Params map[string]any `json:"params"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(s), &log))
	hosts := map[string]bool{}
	for _, e := range log.Events {
		for _, k := range []string{"url", "host"} {
			v, _ := e.Params[k].(string)
			if v == "" {
				continue
			}
			if !strings.Contains(v, "://") {
				v = "//" + v
			}
			// ~NOTFOUND is the resolver rule's own word, no host.
			if u, err := url.Parse(v); err == nil && u.Hostname() != "" && u.Hostname() != "~notfound" {
				hosts[u.Hostname()] = true
			}
		}
	}
	return hosts
}
