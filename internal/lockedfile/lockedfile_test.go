package lockedfile

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errCorrupt = errors.New("corrupt")

func counter(t *testing.T, logs *bytes.Buffer) *File[int] {
	return &File[int]{
		Path: filepath.Join(t.TempDir(), "n"),
		Decode: func(b []byte) (int, error) {
			n, err := strconv.Atoi(string(b))
			if err != nil {
				return 0, errCorrupt
			}
			return n, nil
		},
		Encode:  func(n int) ([]byte, error) { return []byte(strconv.Itoa(n)), nil },
		Empty:   func() int { return 0 },
		Corrupt: errCorrupt,
		Warning: "counter file moved aside",
		Logger:  slog.New(slog.NewTextHandler(logs, nil)),
	}
}

func TestUpdateIsSerialised(t *testing.T) {
	f := counter(t, &bytes.Buffer{})
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, f.Update(context.Background(), func(n int) (int, bool) { return n + 1, true }))
		}()
	}
	wg.Wait()
	n, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 20, n)
	fi, err := os.Stat(f.Path)
	require.NoError(t, err)
	// Windows reports only the read-only bit: a writable file is 0666.
	assert.Equal(t, map[bool]os.FileMode{true: 0o666, false: 0o600}[runtime.GOOS == "windows"], fi.Mode().Perm())
}

func TestCorruptFileIsMovedAside(t *testing.T) {
	logs := &bytes.Buffer{}
	f := counter(t, logs)
	require.NoError(t, os.WriteFile(f.Path, []byte("garbage"), 0o600))
	n, err := f.Load(context.Background())
	require.NoError(t, err)
	assert.Zero(t, n)
	aside, _ := filepath.Glob(f.Path + ".corrupt-*")
	require.Len(t, aside, 1)
	kept, _ := os.ReadFile(aside[0])
	assert.Equal(t, "garbage", string(kept))
	assert.Contains(t, logs.String(), "counter file moved aside")
	require.NoError(t, f.Update(context.Background(), func(n int) (int, bool) { return n + 5, true }))
	n, _ = f.Load(context.Background())
	assert.Equal(t, 5, n)
}

func TestUnmovableCorruptFileIsAnError(t *testing.T) {
	f := counter(t, &bytes.Buffer{})
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	f.Path = filepath.Join(blocker, "n") // its directory is a file
	err := f.Update(context.Background(), func(n int) (int, bool) { return 1, true })
	require.Error(t, err)
}

func TestNoChangeWritesNothing(t *testing.T) {
	f := counter(t, &bytes.Buffer{})
	require.NoError(t, f.Update(context.Background(), func(n int) (int, bool) { return n, false }))
	_, err := os.Stat(f.Path)
	assert.True(t, os.IsNotExist(err))
}
