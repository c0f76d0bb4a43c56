package history

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func openTraces(t *testing.T, capacity int, traceCap, total int64) *Store {
	t.Helper()
	log, _ := newLogger()
	s, err := Open(filepath.Join(t.TempDir(), "history.jsonl"), Options{Capacity: capacity, Logger: log, TraceCap: traceCap, TraceTotal: total})
	require.NoError(t, err)
	return s
}

func TestTraceRoundTripAndErrors(t *testing.T) {
	s := openTraces(t, 10, 1000, 0)
	_, err := s.Trace("a")
	require.ErrorIs(t, err, ErrNoRun)
	require.ErrorIs(t, s.PutTrace("a", []byte("x")), ErrNoRun, "a trace needs its run stored first")
	require.NoError(t, s.Put(fullEntry("a", t0)))
	_, err = s.Trace("a")
	require.ErrorIs(t, err, ErrNoTrace)
	require.ErrorIs(t, s.PutTrace("a", make([]byte, 1001)), ErrTraceTooLarge)

	data := []byte("trace bytes \x00\xff\n with a newline")
	require.NoError(t, s.PutTrace("a", data))
	got, err := s.Trace("a")
	require.NoError(t, err)
	require.Equal(t, data, got)
	require.NoError(t, s.PutTrace("a", []byte("second")))
	got, err = s.Trace("a")
	require.NoError(t, err)
	require.Equal(t, []byte("second"), got)

	// Another Store on the same file sees it.
	other, err := Open(s.Path(), Options{})
	require.NoError(t, err)
	got, err = other.Trace("a")
	require.NoError(t, err)
	require.Equal(t, []byte("second"), got)
	info, err := os.Stat(s.tracePath("a"))
	require.NoError(t, err)
	if os.PathSeparator == '/' {
		require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	}
}

// A run's trace goes with it when the run is evicted.
func TestTraceRemovedWithItsRun(t *testing.T) {
	s := openTraces(t, 2, 0, 0)
	for i, id := range []string{"old", "mid"} {
		require.NoError(t, s.Put(fullEntry(id, t0.Add(time.Duration(i)*time.Minute))))
		require.NoError(t, s.PutTrace(id, []byte("trace of "+id)))
	}
	require.FileExists(t, s.tracePath("old"))
	require.NoError(t, s.Put(fullEntry("new", t0.Add(time.Hour))))
	require.NoFileExists(t, s.tracePath("old"))
	_, err := s.Trace("old")
	require.ErrorIs(t, err, ErrNoRun)
	got, err := s.Trace("mid")
	require.NoError(t, err)
	require.Equal(t, []byte("trace of mid"), got)
}

// Past the total cap the oldest runs' traces go first, never the one just
// stored.
func TestTraceTotalCap(t *testing.T) {
	s := openTraces(t, 10, 200, 600)
	for i, id := range []string{"r1", "r2", "r3", "r4"} {
		require.NoError(t, s.Put(fullEntry(id, t0.Add(time.Duration(i)*time.Minute))))
		require.NoError(t, s.PutTrace(id, bytes.Repeat([]byte{'x'}, 150)))
	}
	// Each file is 150 bytes and a header of 43: three fit, four do not.
	_, err := s.Trace("r1")
	require.ErrorIs(t, err, ErrNoTrace)
	for _, id := range []string{"r2", "r3", "r4"} {
		_, err := s.Trace(id)
		require.NoError(t, err, id)
	}
	// The newest is kept even when it is older than the rest.
	require.NoError(t, s.PutTrace("r1", bytes.Repeat([]byte{'y'}, 150)))
	_, err = s.Trace("r1")
	require.NoError(t, err)
	_, err = s.Trace("r2")
	require.ErrorIs(t, err, ErrNoTrace)
}

// A trace file that is not what PutTrace wrote is refused with a typed
// error, and left in place.
func TestTraceCorruptRefused(t *testing.T) {
	s := openTraces(t, 10, 0, 0)
	for _, id := range []string{"a", "b"} {
		require.NoError(t, s.Put(fullEntry(id, t0)))
		require.NoError(t, s.PutTrace(id, []byte("the trace of "+id)))
	}
	good, err := os.ReadFile(s.tracePath("a"))
	require.NoError(t, err)
	other, err := os.ReadFile(s.tracePath("b"))
	require.NoError(t, err)
	flipped := bytes.Clone(good)
	flipped[len(flipped)-1] ^= 1
	for name, data := range map[string][]byte{
		"flipped":   flipped,
		"cut":       good[:len(good)-2],
		"longer":    append(bytes.Clone(good), 'z'),
		"empty":     nil,
		"no header": bytes.Repeat([]byte{'a'}, maxTraceHeader+10),
		"other run": other,
	} {
		require.NoError(t, os.WriteFile(s.tracePath("a"), data, 0o600))
		_, err := s.Trace("a")
		var ce *TraceCorruptError
		require.True(t, errors.As(err, &ce), "%s: %v", name, err)
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.Equal(t, "a", ce.ID)
		require.FileExists(t, s.tracePath("a"), name)
	}
	// A file larger than the cap is refused without reading it all.
	require.NoError(t, os.WriteFile(s.tracePath("a"), make([]byte, DefaultTraceCap+maxTraceHeader+10), 0o600))
	_, err = s.Trace("a")
	require.ErrorIs(t, err, ErrCorrupt)
}

// FuzzDecodeTrace: a trace file decodes only to data that encodes back to
// the same file.
func FuzzDecodeTrace(f *testing.F) {
	f.Add(encodeTrace("run-1", []byte("data")))
	f.Add(encodeTrace("", nil))
	f.Add([]byte(traceMagic + " 00000000 0 \"x\"\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		data, err := decodeTrace("run-1", raw)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeTrace("run-1", data), raw) {
			t.Fatalf("%q decoded, and does not encode back", raw)
		}
	})
}
