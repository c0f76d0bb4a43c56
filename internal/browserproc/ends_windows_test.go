package browserproc_test

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// browserEnds are the handles --remote-debugging-io-pipes names.
func browserEnds(args []string) (in, out *os.File, err error) {
	r, w, ok := pipeHandles(args)
	if !ok {
		return nil, nil, errors.New("no --remote-debugging-io-pipes=<read>,<write>")
	}
	return os.NewFile(r, "pipe-in"), os.NewFile(w, "pipe-out"), nil
}

// pipeHandles reads --remote-debugging-io-pipes=<read>,<write>.
func pipeHandles(args []string) (read, write uintptr, ok bool) {
	for _, a := range args {
		v, found := strings.CutPrefix(a, "--remote-debugging-io-pipes=")
		if !found {
			continue
		}
		rs, ws, _ := strings.Cut(v, ",")
		r, err1 := strconv.ParseUint(rs, 10, 64)
		w, err2 := strconv.ParseUint(ws, 10, 64)
		return uintptr(r), uintptr(w), err1 == nil && err2 == nil
	}
	return 0, 0, false
}
