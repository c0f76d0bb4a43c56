package permissions

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tranquil/automation/internal/ospath"
	"github.com/tranquil/automation/internal/pathguard"
)

// Directive names.
const (
	dirPermissions = "@permissions"
	dirTimeout     = "@timeout"
)

// Header keys.
var (
	bareKeys   = []string{"none", "browser", "clipboard", "forms", "page-js"}
	valuedKeys = []string{"sites", "net", "import", "run", "read", "write", "env"}
)

// Parse reads the header at the top of a script and validates every
// directive in it. scriptPath must be the script's absolute path; relative
// read and write grants resolve against its directory. Parse reads nothing
// but src, apart from looking up the paths a grant names (to resolve
// symlinks and report what exists).
//
// The header is the comment block that opens the file: "//" lines and blank
// lines, optionally after a "#!" line. It ends at the first line of code, so
// a @permissions line after code is not a header. Line terminators are
// JavaScript's (LF, CRLF, CR, U+2028, U+2029), so what Parse calls a comment
// is exactly what Deno treats as one.
//
// A missing or invalid header returns a *ParseError; the script must then be
// refused, never run on a baseline.
func Parse(src []byte, scriptPath string) (*Header, error) {
	if !ospath.IsAbs(scriptPath) {
		return nil, &ParseError{Kind: ErrSyntax, Msg: fmt.Sprintf("script path %q is not absolute", scriptPath)}
	}
	p := parser{h: &Header{ScriptPath: ospath.Clean(scriptPath), Timeout: DefaultTimeout}}
	p.lexDir = ospath.Dir(p.h.ScriptPath)
	_, realDir, err := pathguard.Resolve(p.lexDir)
	if err != nil {
		return nil, &ParseError{Kind: ErrSyntax, Msg: fmt.Sprintf("cannot resolve the script's directory: %v", err)}
	}
	p.h.ScriptDir = realDir
	if err := p.run(string(src)); err != nil {
		return nil, err
	}
	return p.h, nil
}

type parser struct {
	h      *Header
	lexDir string
	// seen records where each key first appeared, for error positions.
	seen map[string]pos
}

type pos struct{ line, col int }

// line is one source line with its 1-based number.
type line struct {
	text string
	num  int
}

func (p *parser) run(src string) error {
	src = strings.TrimPrefix(src, "\uFEFF")
	lines := splitLines(src)
	i := 0
	if len(lines) > 0 && strings.HasPrefix(lines[0].text, "#!") {
		i = 1
	}
	var permLine, timeoutLine *line
	var permTok, timeoutTok int
	codeAt := -1
	for ; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimLeftFunc(l.text, isJSSpace)
		if t == "" {
			continue
		}
		if !strings.HasPrefix(t, "//") {
			codeAt = i
			break
		}
		name, off, ok := directiveName(l.text)
		if !ok {
			continue
		}
		switch name {
		case dirPermissions:
			if permLine != nil {
				return errAt(l, off, name, ErrDuplicate, fmt.Sprintf("@permissions appears twice (first on line %d); merge them into one line", permLine.num))
			}
			permLine, permTok = &lines[i], off
		case dirTimeout:
			if timeoutLine != nil {
				return errAt(l, off, name, ErrDuplicate, fmt.Sprintf("@timeout appears twice (first on line %d); keep one", timeoutLine.num))
			}
			timeoutLine, timeoutTok = &lines[i], off
		default:
			if s := nearDirective(name); s != "" {
				return errAt(l, off, name, ErrSyntax, fmt.Sprintf("unknown directive %q, did you mean %q?", name, s))
			}
		}
	}
	if permLine == nil {
		return missingHeader(lines, codeAt)
	}
	if err := p.permissions(*permLine, permTok); err != nil {
		return err
	}
	if timeoutLine != nil {
		return p.timeout(*timeoutLine, timeoutTok)
	}
	return nil
}

func missingHeader(lines []line, codeAt int) error {
	if codeAt >= 0 {
		for _, l := range lines[codeAt:] {
			if name, off, ok := directiveName(l.text); ok && name == dirPermissions {
				code := lines[codeAt]
				return errAt(l, off, name, ErrNoHeader, fmt.Sprintf(
					"this @permissions line comes after code (line %d), so it is not a header; move it into the comment block at the very top of the script", code.num))
			}
		}
	}
	return &ParseError{Kind: ErrNoHeader, Msg: "no @permissions header: add a comment at the very top of the script, " +
		`for example "// @permissions none" for a script that needs nothing beyond its sandbox, ` +
		`or "// @permissions browser net=api.example.com read=input.txt"`}
}

// directiveName returns the "@word" that opens a "//" comment line and its
// byte offset in the line.
func directiveName(s string) (name string, off int, ok bool) {
	t := strings.TrimLeftFunc(s, isJSSpace)
	if !strings.HasPrefix(t, "//") {
		return "", 0, false
	}
	off = len(s) - len(t) + 2
	body := s[off:]
	trimmed := strings.TrimLeft(body, " \t")
	off += len(body) - len(trimmed)
	if !strings.HasPrefix(trimmed, "@") {
		return "", 0, false
	}
	end := strings.IndexFunc(trimmed, unicode.IsSpace)
	if end < 0 {
		end = len(trimmed)
	}
	return trimmed[:end], off, true
}

func nearDirective(name string) string {
	for _, d := range []string{dirPermissions, dirTimeout} {
		if strings.EqualFold(name, d) || editDistance(name, d) <= 2 {
			return d
		}
	}
	return ""
}

// splitLines splits on JavaScript's line terminators.
func splitLines(s string) []line {
	var out []line
	start, n := 0, 1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\r', '\u2028', '\u2029':
			out = append(out, line{s[start:i], n})
			n++
			if r == '\r' && i+1 < len(s) && s[i+1] == '\n' {
				size = 2
			}
			start = i + size
		}
		i += size
	}
	return append(out, line{s[start:], n})
}

// isJSSpace is JavaScript's WhiteSpace production (line terminators are
// handled by splitLines).
func isJSSpace(r rune) bool {
	return r == '\t' || r == '\v' || r == '\f' || r == ' ' || r == '\uFEFF' || unicode.Is(unicode.Zs, r)
}

func errAt(l line, off int, tok string, kind error, msg string) *ParseError {
	return &ParseError{Line: l.num, Column: utf8.RuneCountInString(l.text[:off]) + 1, Token: tok, Msg: msg, Kind: kind}
}

// checkChars refuses characters that would make the header read differently
// to the user than to the parser: controls, invisible format characters
// (bidi overrides, zero-width joiners) and unusual spaces.
func checkChars(l line) error {
	for i, r := range l.text {
		switch {
		case r == '\t' || r == ' ':
		case r == utf8.RuneError:
			return errAt(l, i, "", ErrSyntax, "the header is not valid UTF-8")
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r):
			return errAt(l, i, fmt.Sprintf("%U", r), ErrSyntax, fmt.Sprintf("invisible character %U in the header; remove it so the header reads the same to you as to the runtime", r))
		case unicode.IsSpace(r):
			return errAt(l, i, fmt.Sprintf("%U", r), ErrSyntax, fmt.Sprintf("unusual space character %U in the header; use plain spaces", r))
		}
	}
	return nil
}

func (p *parser) timeout(l line, off int) error {
	if err := checkChars(l); err != nil {
		return err
	}
	toks, err := tokenize(l, off+len(dirTimeout))
	if err != nil {
		return err
	}
	if len(toks) != 1 {
		return errAt(l, off, dirTimeout, ErrTimeout, `@timeout takes one value: a duration such as 90s, 15m or 2h, or none`)
	}
	t := toks[0]
	p.h.TimeoutDeclared = true
	if t.raw == "none" {
		p.h.NoTimeout, p.h.Timeout = true, 0
		return nil
	}
	d, perr := time.ParseDuration(t.raw)
	switch {
	case perr != nil && strings.Trim(t.raw, "0123456789") == "":
		return errAt(l, t.off, t.raw, ErrTimeout, fmt.Sprintf("@timeout %s has no unit; write %ss, %sm or %sh", t.raw, t.raw, t.raw, t.raw))
	case perr != nil:
		return errAt(l, t.off, t.raw, ErrTimeout, fmt.Sprintf("@timeout %q is not a duration; write one like 90s, 15m or 2h, or none for no limit", t.raw))
	case d < MinTimeout:
		return errAt(l, t.off, t.raw, ErrTimeout, fmt.Sprintf("@timeout %s is below the minimum of %s; write none for no limit", t.raw, MinTimeout))
	case d > MaxTimeout:
		return errAt(l, t.off, t.raw, ErrTimeout, fmt.Sprintf("@timeout %s is above the maximum of %s; write none for a script that runs until stopped", t.raw, fmtDuration(MaxTimeout)))
	}
	p.h.Timeout = d
	return nil
}

func (p *parser) permissions(l line, off int) error {
	if err := checkChars(l); err != nil {
		return err
	}
	toks, err := tokenize(l, off+len(dirPermissions))
	if err != nil {
		return err
	}
	if len(toks) == 0 {
		return errAt(l, off, dirPermissions, ErrSyntax, `@permissions is empty; write "@permissions none" if the script needs nothing beyond its sandbox`)
	}
	p.seen = map[string]pos{}
	for _, t := range toks {
		if err := p.token(l, t); err != nil {
			return err
		}
	}
	if _, ok := p.seen["none"]; ok && len(p.seen) > 1 {
		for _, t := range toks {
			if k, _, _ := strings.Cut(t.raw, "="); k != "none" {
				return errAt(l, t.off, t.raw, ErrSyntax, fmt.Sprintf("none must stand alone, but %q is also declared; remove none or the other grants", t.raw))
			}
		}
	}
	if len(p.h.Sites) > 0 && !p.h.Browser && !p.h.Forms && !p.h.PageJS {
		return &ParseError{Line: l.num, Column: p.seen["sites"].col, Token: "sites", Kind: ErrBadValue,
			Msg: "sites= scopes what the script does in browser tabs, and none of browser, forms or page-js is declared; add one, or remove sites="}
	}
	p.finish()
	return nil
}

func (p *parser) token(l line, t token) error {
	key, _, hasValue := strings.Cut(t.raw, "=")
	col := utf8.RuneCountInString(l.text[:t.off]) + 1
	if slices.Contains(bareKeys, key) {
		if hasValue {
			return errAt(l, t.off, t.raw, ErrBadValue, fmt.Sprintf("%s takes no value; write just %s", key, key))
		}
		if _, dup := p.seen[key]; dup && key == "none" {
			return errAt(l, t.off, t.raw, ErrSyntax, "none appears twice; write it once")
		}
		p.seen[key] = pos{l.num, col}
		switch key {
		case "none":
			p.h.None = true
		case "browser":
			p.h.Browser = true
		case "clipboard":
			p.h.Clipboard = true
		case "forms":
			p.h.Forms = true
		case "page-js":
			p.h.PageJS = true
		}
		return nil
	}
	if strings.HasPrefix(t.raw, "=") {
		return errAt(l, t.off, t.raw, ErrSyntax, "write a key and its value with no spaces around =, like net=api.example.com")
	}
	if !slices.Contains(valuedKeys, key) {
		if parts := strings.Split(key, ","); len(parts) > 1 && slices.ContainsFunc(parts, func(p string) bool {
			return slices.Contains(bareKeys, p) || slices.Contains(valuedKeys, p)
		}) {
			return errAt(l, t.off, t.raw, ErrSyntax, fmt.Sprintf("separate keys with spaces, not commas: %s", strings.Join(parts, " ")))
		}
		return errAt(l, t.off, t.raw, ErrUnknownKey, unknownKeyMsg(key))
	}
	if !hasValue {
		return errAt(l, t.off, t.raw, ErrBadValue, fmt.Sprintf("%s needs a value, for example %s", key, example(key)))
	}
	if _, ok := p.seen[key]; !ok {
		p.seen[key] = pos{l.num, col}
	}
	vals, err := splitValues(l, t, len(key)+1)
	if err != nil {
		return err
	}
	for _, v := range vals {
		if err := p.value(l, key, v); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) value(l line, key string, v value) error {
	fail := func(kind error, msg string) error {
		return errAt(l, v.off, key+"="+v.text, kind, msg)
	}
	switch key {
	case "net", "import":
		norm, msg := parseHost(v.text, key)
		if msg != "" {
			return fail(ErrBadValue, msg)
		}
		if key == "net" {
			p.h.Net = append(p.h.Net, norm)
		} else {
			p.h.Import = append(p.h.Import, norm)
		}
	case "sites":
		norm, msg := parseHost(v.text, key)
		if msg != "" {
			return fail(ErrBadValue, msg)
		}
		p.h.Sites = append(p.h.Sites, norm)
	case "env":
		msg, kind := checkEnv(v.text)
		if msg != "" {
			return fail(kind, msg)
		}
		p.h.Env = append(p.h.Env, v.text)
	case "run":
		if msg := checkRun(v.text); msg != "" {
			return fail(ErrBadValue, msg)
		}
		p.h.Run = append(p.h.Run, ospath.Clean(v.text))
		if !ospath.IsAbs(v.text) {
			p.h.Run[len(p.h.Run)-1] = v.text
		}
	case "read", "write":
		path, msg, kind := p.resolvePath(key, v.text)
		if msg != "" {
			return fail(kind, msg)
		}
		if key == "read" {
			p.h.Read = append(p.h.Read, path)
		} else {
			p.h.Write = append(p.h.Write, path)
		}
	}
	return nil
}

// finish sorts and deduplicates every list, so that equal declarations
// compare equal however they were written.
func (p *parser) finish() {
	for _, s := range []*[]string{&p.h.Sites, &p.h.Net, &p.h.Import, &p.h.Run, &p.h.Env} {
		slices.Sort(*s)
		*s = slices.Compact(*s)
	}
	for _, s := range []*[]Path{&p.h.Read, &p.h.Write} {
		slices.SortFunc(*s, func(a, b Path) int { return strings.Compare(a.Resolved, b.Resolved) })
		*s = slices.CompactFunc(*s, func(a, b Path) bool { return a.Resolved == b.Resolved })
	}
}

func unknownKeyMsg(key string) string {
	if rest, ok := strings.CutPrefix(strings.TrimLeft(key, "-"), "allow-"); ok {
		if slices.Contains(valuedKeys, rest) {
			return fmt.Sprintf("header keys are not deno flags: write %s=… instead of %s=…", rest, key)
		}
		return fmt.Sprintf("header keys are not deno flags; %q is not a permission", key)
	}
	all := append(append([]string{}, bareKeys...), valuedKeys...)
	best, bestD := "", 3
	for _, k := range all {
		if strings.EqualFold(k, key) {
			return fmt.Sprintf("unknown key %q, did you mean %q? keys are lower case", key, k)
		}
		if d := editDistance(key, k); d < bestD && d < len(key) {
			best, bestD = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown key %q, did you mean %q?", key, best)
	}
	return fmt.Sprintf("unknown key %q; known keys are %s", key, strings.Join(all, ", "))
}

func example(key string) string {
	switch key {
	case "sites":
		return "sites=example.com"
	case "net":
		return "net=api.example.com"
	case "import":
		return "import=esm.sh"
	case "run":
		return "run=git"
	case "read":
		return "read=input.txt"
	case "write":
		return "write=output.md"
	default:
		return "env=HOME"
	}
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and adjacent transpositions each cost one, so
// "brwoser" is one edit from "browser".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 64
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
