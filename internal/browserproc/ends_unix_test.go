//go:build unix

package browserproc_test

import (
	"errors"
	"os"
)

// browserEnds are fds 3 (the browser reads) and 4 (it writes).
func browserEnds([]string) (in, out *os.File, err error) {
	in, out = os.NewFile(3, "pipe-in"), os.NewFile(4, "pipe-out")
	if in == nil || out == nil {
		return nil, nil, errors.New("no fds 3 and 4")
	}
	return in, out, nil
}
