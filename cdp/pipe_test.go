package cdp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mafredri/cdp/protocol/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tranquil/automation/internal/browserproc"
	"github.com/tranquil/automation/internal/testenv"
)

// fakePipeBrowser is the far end of a pipe connection: it hands each
// request to answer and writes back what answer returns, NUL-framed.
type fakePipeBrowser struct {
	in  *bufio.Reader // requests
	out *os.File      // replies
}

// newFakePipe returns a connection over two OS pipes and the fake browser
// on their other ends.
func newFakePipe(t *testing.T, maxSize int64) (*Browser, *fakePipeBrowser) {
	t.Helper()
	pp, err := browserproc.NewPipes()
	require.NoError(t, err)
	t.Cleanup(pp.CloseAll) // closing twice is harmless
	m := newMux(newPipeTransport(pp.FromBrowser, pp.ToBrowser, maxSize), maxSize)
	b, err := newBrowser(context.Background(), m, "")
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b, &fakePipeBrowser{in: bufio.NewReader(pp.BrowserReads), out: pp.BrowserWrites}
}

// serve answers requests until the pipe closes.
func (f *fakePipeBrowser) serve(answer func(req map[string]any) string) {
	for {
		msg, err := f.in.ReadBytes(0)
		if err != nil {
			return
		}
		var req map[string]any
		if json.Unmarshal(msg[:len(msg)-1], &req) != nil {
			return
		}
		if _, err := io.WriteString(f.out, answer(req)+"\x00"); err != nil {
			return
		}
	}
}

func TestPipeTransport(t *testing.T) {
	testenv.CheckGoroutines(t)
	const limit = 4 << 10
	b, fake := newFakePipe(t, limit)
	big := strings.Repeat("x", limit)
	go fake.serve(func(req map[string]any) string {
		id := strconv.FormatFloat(req["id"].(float64), 'f', -1, 64)
		switch req["method"] {
		case "Browser.getVersion":
			// An event first, and one too large to keep, both unasked.
			return `{"method":"Target.targetCreated","params":{"big":"` + big + `"}}` + "\x00" +
				`{"method":"Target.targetCreated","params":{}}` + "\x00" +
				`{"id":` + id + `,"result":{"product":"Fake/1"}}`
		case "Browser.getBrowserCommandLine":
			return `{"id":` + id + `,"result":{"arguments":["` + big + `"]}}`
		case "Runtime.evaluate":
			return `{"id":` + id + `,"result":{"v":"` + big + `"},"sessionId":"S1"}`
		}
		return `{"id":` + id + `,"error":{"code":-32601,"message":"unknown"}}`
	})
	ctx := tctx(t, 10*time.Second)

	v, err := b.Client().Browser.GetVersion(ctx)
	require.NoError(t, err)
	assert.Equal(t, "Fake/1", v.Product)

	// A reply over the limit fails its own call, and only that one.
	_, err = b.Client().Browser.GetBrowserCommandLine(ctx)
	require.ErrorContains(t, err, "message too large")
	_, rt, err := b.m.open(ctx, "S1", nil)
	require.NoError(t, err)
	_, err = b.m.invoke(ctx, rt, "Runtime.evaluate", []byte(`{}`), 0)
	require.ErrorIs(t, err, ErrMessageTooLarge)
	v, err = b.Client().Browser.GetVersion(ctx)
	require.NoError(t, err, "the connection lives on")
	assert.Equal(t, "Fake/1", v.Product)

	// Writes over the limit never leave.
	_, err = b.m.invoke(ctx, rt, "Runtime.evaluate", []byte(`"`+big+`"`), 0)
	require.ErrorIs(t, err, ErrMessageTooLarge)

	// The browser's end closing is the browser's death.
	require.NoError(t, fake.out.Close())
	select {
	case <-b.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("connection outlived its pipe")
	}
	require.ErrorIs(t, b.Err(), ErrBrowserClosed)
	_, err = b.Client().Browser.GetVersion(ctx)
	require.ErrorIs(t, b.fail(err), ErrBrowserClosed)
	_, err = b.m.invoke(ctx, rt, "Runtime.evaluate", []byte(`{}`), 0)
	var de *DetachedError
	require.ErrorAs(t, err, &de)
	require.ErrorIs(t, err, ErrBrowserClosed)
}

func TestPipeCloseEndsSilentReader(t *testing.T) {
	testenv.CheckGoroutines(t)
	b, _ := newFakePipe(t, 1<<20) // the fake never writes
	done := make(chan struct{})
	go func() { b.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not end the reader blocked on a silent pipe")
	}
	require.ErrorIs(t, b.Err(), ErrBrowserClosed)
}

// TestOversizedReplies: over the pipe and over a WebSocket alike, a reply
// or event over MaxMessageSize costs the call it answers, not the
// connection.
func TestOversizedReplies(t *testing.T) {
	t.Parallel()
	const limit = 256 << 10
	ctx := tctx(t, 60*time.Second)
	p, err := startChromium(ctx, testenv.Chromium(t), true, &Options{MaxMessageSize: limit})
	require.NoError(t, err)
	defer p.Close()
	withPort := launchWithPort(t)
	ws, err := Connect(ctx, withPort.Endpoint(), &Options{MaxMessageSize: limit})
	require.NoError(t, err)
	defer ws.Close()

	for name, b := range map[string]*Browser{"pipe": p.Browser(), "websocket": ws} {
		t.Run(name, func(t *testing.T) {
			tab, err := b.NewTab(ctx, serve("/oversize", `<p>x</p>`))
			require.NoError(t, err)
			defer tab.Close(ctx)
			_, err = tab.Evaluate(ctx, `(n) => "x".repeat(n)`, limit)
			require.ErrorIs(t, err, ErrMessageTooLarge)
			var o *oversizeError
			require.ErrorAs(t, err, &o)
			assert.Greater(t, o.Size, int64(limit))

			_, err = tab.c.Runtime.Evaluate(ctx, runtime.NewEvaluateArgs(`"y".repeat(300 << 10)`).SetReturnByValue(true))
			require.ErrorContains(t, err, "message too large")

			// An event too large to keep is dropped, a console message's
			// for a stand-in saying so; the next one arrives whole.
			seen := make(chan string, 4)
			stop := tab.OnConsole(func(m ConsoleMessage) { seen <- m.Text })
			defer stop()
			_, err = tab.Evaluate(ctx, `() => { console.log("z".repeat(300 << 10)); console.log("small") }`)
			require.NoError(t, err)
			for _, want := range []string{`^\(a console message of 307\d{3} bytes, too large to read\)$`, `^small$`} {
				select {
				case text := <-seen:
					assert.Regexp(t, want, text)
				case <-time.After(5 * time.Second):
					t.Fatalf("no console message matching %s arrived", want)
				}
			}

			v, err := tab.Evaluate(ctx, `() => 6 * 7`)
			require.NoError(t, err, "the connection lives on")
			require.JSONEq(t, `42`, string(v))
		})
	}
}

// noisePage is a canvas of seeded noise, which PNG cannot compress: its
// screenshots are as big as their pixel count says.
const noisePage = `<body style="margin:0"><canvas id=c width=1600 height=2400></canvas><script>
const c = document.getElementById("c"), g = c.getContext("2d"), img = g.createImageData(c.width, c.height);
let s = 7;
for (let i = 0; i < img.data.length; i++) { s = (Math.imul(s, 1103515245) + 12345) >>> 0; img.data[i] = i % 4 === 3 ? 255 : s >>> 24; }
g.putImageData(img, 0, 0);
</script>`

// TestScreenshotNearLimit takes a screenshot whose reply is just under
// MaxMessageSize over the pipe, then one just over it, which fails alone.
func TestScreenshotNearLimit(t *testing.T) {
	t.Parallel()
	const limit = 12 << 20
	ctx := tctx(t, 90*time.Second)
	url := serve("/noise", noisePage)

	// Bytes per row, measured where the limit is out of the way.
	probe := newTab(t, url)
	shot, err := probe.Screenshot(ctx, ScreenshotOptions{Clip: &Rect{Width: 1600, Height: 200}})
	require.NoError(t, err)
	perRow := float64(len(shot)) / 200 * 4 / 3 // base64 on the wire
	rows := func(fraction float64) float64 { return float64(int(fraction * limit / perRow)) }

	p, err := startChromium(ctx, testenv.Chromium(t), true, &Options{MaxMessageSize: limit})
	require.NoError(t, err)
	defer p.Close()
	tab, err := p.Browser().NewTab(ctx, url)
	require.NoError(t, err)

	near := rows(0.97)
	shot, err = tab.Screenshot(ctx, ScreenshotOptions{Clip: &Rect{Width: 1600, Height: near}})
	require.NoError(t, err)
	wire := len(shot) * 4 / 3
	assert.Greater(t, wire, limit*9/10, "the screenshot is not near the limit")
	assert.Less(t, wire, limit)
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
	require.Equal(t, int(near), img.Bounds().Dy())

	_, err = tab.Screenshot(ctx, ScreenshotOptions{Clip: &Rect{Width: 1600, Height: rows(1.05)}})
	require.ErrorContains(t, err, "message too large")
	shot, err = tab.Screenshot(ctx, ScreenshotOptions{Clip: &Rect{Width: 100, Height: 100}})
	require.NoError(t, err, "the connection lives on")
	_, err = png.Decode(bytes.NewReader(shot))
	require.NoError(t, err)
}
