package capnweb

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// noRefs is a refSource for plain values: any reference is refused.
type noRefs struct{}

func (noRefs) ref(id int64) (*future, error) {
	return nil, protoErrorf("no such entry on exports table: %d", id)
}
func (noRefs) peer(id int64, _ bool) (any, error) {
	return nil, protoErrorf("no such import: %d", id)
}

// decodeValue decodes one expression that holds no references.
func decodeValue(s *Session, data []byte) (any, error) {
	v, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	ev := &evaluator{s: s, src: noRefs{}}
	return ev.eval(v, 0)
}

func encodeValue(s *Session, v any) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.encode(nil, v, 0)
}

// FuzzDecode checks that no expression makes the decoder panic, and that
// whatever decodes re-encodes to a stable form.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`1`, `"s"`, `null`, `[[]]`, `[[1,[[2,"s"]]]]`, `["undefined"]`, `["inf"]`, `["-inf"]`, `["nan"]`,
		`["bigint","-12345678901234567890"]`, `["date",1700000000000]`, `["date",null]`,
		`["bytes","AQID+g"]`, `["bytes","AQID+g=="]`, `["bytes","CQ","ArrayBuffer"]`,
		`["error","TypeError","t",null,{"code":"E"}]`, `["url","https://example.com/a?b=1"]`,
		`["headers",[["x-a","1"]]]`, `{"a":[[1,2]],"b":{"c":["undefined"]}}`, `["weird",1]`, `[]`,
		`{"constructor":1}`, `1e400`, `[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]`,
	} {
		f.Add([]byte(seed))
	}
	s := &Session{opts: Options{MaxBigIntDigits: 1000}}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decodeValue(s, data)
		if err != nil {
			return
		}
		enc, err := encodeValue(s, v)
		if err != nil {
			t.Fatalf("decoded %q but cannot encode %#v: %v", data, v, err)
		}
		v2, err := decodeValue(s, enc)
		if err != nil {
			t.Fatalf("re-decoding %q (from %q): %v", enc, data, err)
		}
		enc2, err := encodeValue(s, v2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("unstable encoding: %q then %q (%v)", enc, enc2, err)
		}
	})
}

// FuzzSession feeds a server session random frames (one per line). It
// must not panic, must end when closed, and must leave no goroutine
// behind.
func FuzzSession(f *testing.F) {
	for _, seed := range []string{
		"[\"push\",[\"pipeline\",0,[\"add\"],[1,2]]]\n[\"pull\",1]\n[\"release\",1,1]",
		"[\"push\",[\"pipeline\",0,[\"makeCounter\"],[1]]]\n[\"push\",[\"pipeline\",1,[\"increment\"],[2]]]\n[\"pull\",2]\n[\"release\",1,1]",
		"[\"push\",[\"pipeline\",0,[\"callMeBack\"],[[\"export\",-1],21]]]\n[\"pull\",1]\n[\"resolve\",1,42]",
		"[\"push\",[\"pipeline\",0,[\"getUserIds\"],[]]]\n[\"push\",[\"remap\",1,[],[[\"import\",0]],[[\"pipeline\",-1,[\"getUserName\"],[[\"pipeline\",0]]],[[[\"pipeline\",0],[\"pipeline\",1]]]]]]\n[\"pull\",2]",
		"[\"push\",[\"pipeline\",0,[\"echo\"],[[\"promise\",-1]]]]\n[\"pull\",1]\n[\"resolve\",-1,[\"export\",-2]]",
		"[\"release\",0,1]\n[\"push\",[\"pipeline\",0,[\"add\"],[1,2]]]",
		"[\"abort\",[\"error\",\"Error\",\"bye\"]]",
		"[\"stream\",[\"pipeline\",0,[\"add\"],[]]]",
		"[\"push\",[\"pipeline\",0,[\"registerListener\"],[[\"export\",-1]]]]\n[\"push\",[\"pipeline\",0,[\"notify\"],[\"x\"]]]\n[\"pull\",2]\n[\"reject\",1,\"no\"]",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, frames string) {
		events := make(chan string, 1024)
		api := &labAPI{Version: "1.0", events: events}
		mine, peer := memPipe()
		s, err := NewSession(mine, api, &Options{MaxInFlight: 64, CloseTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, fr := range strings.Split(frames, "\n") {
			if peer.Send(ctx, []byte(fr)) != nil {
				break
			}
		}
		// Drain what the session says so that it never blocks on us.
		go func() {
			for {
				if _, err := peer.Recv(ctx); err != nil {
					return
				}
			}
		}()
		time.Sleep(time.Millisecond)
		closeOrDump(t, s)
		cancel()
		peer.Close(nil)
		noPackageGoroutines(t)
	})
}

// packageGoroutines returns the stacks of running goroutines that code of
// this package started (the caller's excluded). The fuzzing engine starts
// goroutines of its own, so a plain count would not do.
func packageGoroutines() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "created by github.com/tranquil/automation/rpc/capnweb.") && !strings.Contains(g, "packageGoroutines") {
			out = append(out, g)
		}
	}
	return out
}

// closeOrDump closes s, failing with every goroutine's stack if that hangs.
func closeOrDump(t *testing.T, s *Session) {
	t.Helper()
	closed := make(chan struct{})
	go func() {
		s.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("Close hung:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// noPackageGoroutines fails when goroutines this package started are still
// running a few seconds on.
func noPackageGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for len(packageGoroutines()) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if g := packageGoroutines(); len(g) > 0 {
		t.Fatalf("goroutine leak:\n%s", strings.Join(g, "\n\n"))
	}
}
