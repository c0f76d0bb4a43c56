// Copyright 2024 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Go's Windows path code (internal/filepathlite, path/filepath), as it
// reads paths on any system: Clean, Dir, Join, IsAbs and the volume name.
// Only the names changed (a win prefix), and the separator is Windows'.
// Go's license: https://go.dev/LICENSE (BSD-3-Clause).

package ospath

import (
	"slices"
	"strings"
)

const winSeparator = '\\'

func winIsPathSeparator(c uint8) bool { return c == '\\' || c == '/' }

func winFromSlash(path string) string { return strings.ReplaceAll(path, "/", `\`) }

// A lazybuf is a lazily constructed path buffer.
// It supports append, reading previously appended bytes,
// and retrieving the final string. It does not allocate a buffer
// to hold the output until that output diverges from s.
type lazybuf struct {
	path       string
	buf        []byte
	w          int
	volAndPath string
	volLen     int
}

func (b *lazybuf) index(i int) byte {
	if b.buf != nil {
		return b.buf[i]
	}
	return b.path[i]
}

func (b *lazybuf) append(c byte) {
	if b.buf == nil {
		if b.w < len(b.path) && b.path[b.w] == c {
			b.w++
			return
		}
		b.buf = make([]byte, len(b.path))
		copy(b.buf, b.path[:b.w])
	}
	b.buf[b.w] = c
	b.w++
}

func (b *lazybuf) prepend(prefix ...byte) {
	b.buf = slices.Insert(b.buf, 0, prefix...)
	b.w += len(prefix)
}

func (b *lazybuf) string() string {
	if b.buf == nil {
		return b.volAndPath[:b.volLen+b.w]
	}
	return b.volAndPath[:b.volLen] + string(b.buf[:b.w])
}

func winClean(path string) string {
	originalPath := path
	volLen := winVolumeNameLen(path)
	path = path[volLen:]
	if path == "" {
		if volLen > 1 && winIsPathSeparator(originalPath[0]) && winIsPathSeparator(originalPath[1]) {
			// should be UNC
			return winFromSlash(originalPath)
		}
		return originalPath + "."
	}
	rooted := winIsPathSeparator(path[0])

	// Invariants:
	//	reading from path; r is index of next byte to process.
	//	writing to buf; w is index of next byte to write.
	//	dotdot is index in buf where .. must stop, either because
	//		it is the leading slash or it is a leading ../../.. prefix.
	n := len(path)
	out := lazybuf{path: path, volAndPath: originalPath, volLen: volLen}
	r, dotdot := 0, 0
	if rooted {
		out.append(winSeparator)
		r, dotdot = 1, 1
	}

	for r < n {
		switch {
		case winIsPathSeparator(path[r]):
			// empty path element
			r++
		case path[r] == '.' && (r+1 == n || winIsPathSeparator(path[r+1])):
			// . element
			r++
		case path[r] == '.' && path[r+1] == '.' && (r+2 == n || winIsPathSeparator(path[r+2])):
			// .. element: remove to last separator
			r += 2
			switch {
			case out.w > dotdot:
				// can backtrack
				out.w--
				for out.w > dotdot && !winIsPathSeparator(out.index(out.w)) {
					out.w--
				}
			case !rooted:
				// cannot backtrack, but not rooted, so append .. element.
				if out.w > 0 {
					out.append(winSeparator)
				}
				out.append('.')
				out.append('.')
				dotdot = out.w
			}
		default:
			// real path element.
			// add slash if needed
			if rooted && out.w != 1 || !rooted && out.w != 0 {
				out.append(winSeparator)
			}
			// copy element
			for ; r < n && !winIsPathSeparator(path[r]); r++ {
				out.append(path[r])
			}
		}
	}

	// Turn empty string into "."
	if out.w == 0 {
		out.append('.')
	}

	winPostClean(&out) // avoid creating absolute paths on Windows
	return winFromSlash(out.string())
}

func winDir(path string) string {
	vol := winFromSlash(path[:winVolumeNameLen(path)])
	i := len(path) - 1
	for i >= len(vol) && !winIsPathSeparator(path[i]) {
		i--
	}
	dir := winClean(path[len(vol) : i+1])
	if dir == "." && len(vol) > 2 {
		// must be UNC
		return vol
	}
	return vol + dir
}

func winIsAbs(path string) (b bool) {
	l := winVolumeNameLen(path)
	if l == 0 {
		return false
	}
	// If the volume name starts with a double slash, this is an absolute path.
	if winIsPathSeparator(path[0]) && winIsPathSeparator(path[1]) {
		return true
	}
	path = path[l:]
	if path == "" {
		return false
	}
	return winIsPathSeparator(path[0])
}

// winVolumeNameLen returns length of the leading volume name on Windows.
//
// See:
// https://learn.microsoft.com/en-us/dotnet/standard/io/file-path-formats
// https://googleprojectzero.blogspot.com/2016/02/the-definitive-guide-on-win32-to-nt.html
func winVolumeNameLen(path string) int {
	switch {
	case len(path) >= 2 && path[1] == ':':
		// Path starts with a drive letter.
		return 2

	case len(path) == 0 || !winIsPathSeparator(path[0]):
		// Path does not have a volume component.
		return 0

	case winPathHasPrefixFold(path, `\\.\UNC`):
		// The UNC host and share are part of the volume prefix.
		return winUNCLen(path, len(`\\.\UNC\`))

	case winPathHasPrefixFold(path, `\\.`) ||
		winPathHasPrefixFold(path, `\\?`) || winPathHasPrefixFold(path, `\??`):
		// Path starts with \\.\, and is a Local Device path; or
		// path starts with \\?\ or \??\ and is a Root Local Device path.
		if len(path) == 3 {
			return 3 // exactly \\.
		}
		_, rest, ok := winCutPath(path[4:])
		if !ok {
			return len(path)
		}
		return len(path) - len(rest) - 1

	case len(path) >= 2 && winIsPathSeparator(path[1]):
		// Path starts with \\, and is a UNC path.
		return winUNCLen(path, 2)
	}
	return 0
}

// winPathHasPrefixFold tests whether the path s begins with prefix,
// ignoring case and treating all path separators as equivalent.
// If s is longer than prefix, then s[len(prefix)] must be a path separator.
func winPathHasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if winIsPathSeparator(prefix[i]) {
			if !winIsPathSeparator(s[i]) {
				return false
			}
		} else if winToUpper(prefix[i]) != winToUpper(s[i]) {
			return false
		}
	}
	if len(s) > len(prefix) && !winIsPathSeparator(s[len(prefix)]) {
		return false
	}
	return true
}

func winToUpper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// winUNCLen returns the length of the volume prefix of a UNC path.
// prefixLen is the prefix prior to the start of the UNC host;
// for example, for "//host/share", the prefixLen is len("//")==2.
func winUNCLen(path string, prefixLen int) int {
	count := 0
	for i := prefixLen; i < len(path); i++ {
		if winIsPathSeparator(path[i]) {
			count++
			if count == 2 {
				return i
			}
		}
	}
	return len(path)
}

// winCutPath slices path around the first path separator.
func winCutPath(path string) (before, after string, found bool) {
	for i := range path {
		if winIsPathSeparator(path[i]) {
			return path[:i], path[i+1:], true
		}
	}
	return path, "", false
}

// winPostClean adjusts the results of Clean to avoid turning a relative path
// into an absolute or rooted one.
func winPostClean(out *lazybuf) {
	if out.volLen != 0 || out.buf == nil {
		return
	}
	// If a ':' appears in the path element at the start of a path,
	// insert a .\ at the beginning to avoid converting relative paths
	// like a/../c: into c:.
	for _, c := range out.buf {
		if winIsPathSeparator(c) {
			break
		}
		if c == ':' {
			out.prepend('.', winSeparator)
			return
		}
	}
	// If a path begins with \??\, insert a \. at the beginning
	// to avoid converting paths like \a\..\??\c:\x into \??\c:\x
	// (equivalent to c:\x).
	if len(out.buf) >= 3 && winIsPathSeparator(out.buf[0]) && out.buf[1] == '?' && out.buf[2] == '?' {
		out.prepend(winSeparator, '.')
	}
}

func winJoin(elem []string) string {
	var b strings.Builder
	var lastChar byte
	for _, e := range elem {
		switch {
		case b.Len() == 0:
			// Add the first non-empty path element unchanged.
		case winIsPathSeparator(lastChar):
			// If the path ends in a slash, strip any leading slashes from the next
			// path element to avoid creating a UNC path (any path starting with "\\")
			// from non-UNC elements.
			for len(e) > 0 && winIsPathSeparator(e[0]) {
				e = e[1:]
			}
			// If the path is \ and the next path element is ??,
			// add an extra .\ to create \.\?? rather than \??\
			// (a Root Local Device path).
			if b.Len() == 1 && strings.HasPrefix(e, "??") && (len(e) == len("??") || winIsPathSeparator(e[2])) {
				b.WriteString(`.\`)
			}
		case lastChar == ':':
			// If the path ends in a colon, keep the path relative to the current directory
			// on a drive and don't add a separator. Preserve leading slashes in the next
			// path element, which may make the path absolute.
			//
			// 	Join(`C:`, `f`) = `C:f`
			//	Join(`C:`, `\f`) = `C:\f`
		default:
			// In all other cases, add a separator between elements.
			b.WriteByte('\\')
			lastChar = '\\'
		}
		if len(e) > 0 {
			b.WriteString(e)
			lastChar = e[len(e)-1]
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return winClean(b.String())
}
