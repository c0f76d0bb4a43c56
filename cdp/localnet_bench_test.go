package cdp

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tranquil/automation/internal/testenv"
)

// BenchmarkManySubresources measures Tab.Goto of a page of 100 images in a
// guarded tab against the same in a tab no gateway guards, interleaved in
// rounds on one browser: the images on the web (a name, pub.test, which
// the browser maps to this computer itself, so that nothing is looked up)
// and on a local address every tab is granted (each image then paused and
// judged). Reported: the p50 of each, in µs.
func BenchmarkManySubresources(b *testing.B) {
	chromium := testenv.Chromium(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	p, err := startChromiumWith(ctx, chromium, true, nil, "--host-resolver-rules=MAP pub.test 127.0.0.1")
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	pages.Once("/bench-many/img", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "image/gif")
		fmt.Fprint(w, "GIF89a\x01\x00\x01\x00\x00\x00\x00;")
	}))
	var imgs strings.Builder
	for i := range 100 {
		fmt.Fprintf(&imgs, `<img src="/bench-many/img?%d">`, i)
	}
	serve("/bench-many/page", `<title>many</title>`+imgs.String())
	local := site.URL + "/bench-many/page"
	web := strings.Replace(local, "127.0.0.1", "pub.test", 1)
	resolver := &fakeResolver{addrs: map[string]string{"pub.test": "93.184.216.34"}}
	const rounds, perRound = 6, 10
	got := map[string][]float64{}
	measure := func(name, page string, g *Gateway) {
		tab, err := p.Browser().NewTabWith(ctx, "", TabOptions{Gateway: g})
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
			_ = tab.Close(cctx)
			ccancel()
		}()
		for i := 0; i < perRound; i++ {
			t0 := time.Now()
			if _, err := tab.Goto(ctx, fmt.Sprintf("%s?%d", page, i), Load); err != nil {
				b.Fatal(err)
			}
			got[name] = append(got[name], float64(time.Since(t0).Microseconds()))
		}
	}
	for b.Loop() {
		clear(got)
		for r := 0; r < rounds; r++ {
			if r%2 == 0 {
				measure("unguarded-web", web, nil)
				measure("unguarded-local", local, nil)
			}
			g, err := Guard(ctx, p.Browser(), PagePolicy{AllowLocal: []string{strings.TrimPrefix(site.URL, "http://")}, Resolver: resolver})
			if err != nil {
				b.Fatal(err)
			}
			measure("guarded-web", web, g)
			measure("guarded-local", local, g)
			g.Close()
			if r%2 == 1 {
				measure("unguarded-web", web, nil)
				measure("unguarded-local", local, nil)
			}
		}
	}
	for name, v := range got {
		b.ReportMetric(median(v), name+"-p50-µs")
	}
}
