package traceview

import (
	"bufio"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// A call's site names a file relative to the script's folder, as the
// script's SDK reported it: a label the script could write as it likes.
// The run page shows the line it names only from a script file (by its
// extension) inside that folder, read through an os.Root (no "..", no
// link out), bounded, as the file is now.

// Bounds on reading scripts for one page.
const (
	maxSourceFile  = 4 << 20 // bytes of one file read
	maxSourceFiles = 32      // files read
	maxSourceLine  = 240     // bytes of a line shown
)

// scriptExts are the files a site's line is read from.
var scriptExts = map[string]bool{".ts": true, ".mts": true, ".cts": true, ".tsx": true, ".js": true, ".mjs": true, ".cjs": true, ".jsx": true}

// scripts reads the lines call sites name, for one page. A nil *scripts
// reads none.
type scripts struct {
	root  *os.Root
	files map[string][]string // nil for a file that could not be read
}

// openScripts opens the folder of script, the run's script file; nil
// when it cannot.
func openScripts(script string) *scripts {
	if script == "" {
		return nil
	}
	root, err := os.OpenRoot(filepath.Dir(script))
	if err != nil {
		return nil
	}
	return &scripts{root: root, files: map[string][]string{}}
}

func (s *scripts) close() {
	if s != nil {
		s.root.Close()
	}
}

// siteName is how the page names a call site: its file (unescaped from
// its URL form) and line.
func siteName(file string, line int) string {
	if file == "" {
		return ""
	}
	if u, err := url.PathUnescape(file); err == nil && !strings.Contains(file, "://") {
		file = u
	}
	if line <= 0 {
		return file
	}
	return file + ":" + strconv.Itoa(line)
}

// line is line n (from 1) of file, trimmed and cut short, or "".
func (s *scripts) line(file string, n int) string {
	if s == nil || n <= 0 || strings.Contains(file, ":") {
		return "" // a URL: a module from elsewhere
	}
	rel, err := url.PathUnescape(file)
	if err != nil || !filepath.IsLocal(filepath.FromSlash(rel)) || !scriptExts[strings.ToLower(path.Ext(rel))] {
		return ""
	}
	lines, ok := s.files[rel]
	if !ok {
		if len(s.files) >= maxSourceFiles {
			return ""
		}
		lines = s.read(rel)
		s.files[rel] = lines
	}
	if n > len(lines) {
		return ""
	}
	return cutEnd(strings.TrimSpace(lines[n-1]), maxSourceLine)
}

// read is the lines of rel, or nil when it cannot be read whole.
func (s *scripts) read(rel string) []string {
	f, err := s.root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > maxSourceFile {
		return nil
	}
	var lines []string
	sc := bufio.NewScanner(io.LimitReader(f, maxSourceFile))
	sc.Buffer(make([]byte, 0, 64<<10), maxSourceFile)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if sc.Err() != nil {
		return nil
	}
	return lines
}
