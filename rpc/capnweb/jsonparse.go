package capnweb

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONNesting bounds how deeply a frame's JSON may nest before it is
// refused as malformed, as encoding/json does; the protocol's own, smaller
// depth limit applies when the value is evaluated.
const maxJSONNesting = 10000

// parseJSON parses one frame into []any, *Object, string,
// json.Number, bool and nil, accepting exactly what encoding/json accepts
// and producing the same values (invalid UTF-8 and lone surrogates become
// U+FFFD, a repeated key keeps its first place and last value, as JSON.parse does). It is a single pass with
// no reflection: frames are parsed on the path of every call.
func parseJSON(msg []byte) (any, error) {
	var p jsonParser
	return p.parse(msg)
}

// parse is parseJSON reusing p's scratch space and string table from
// earlier frames. A jsonParser is for one goroutine at a time.
func (p *jsonParser) parse(msg []byte) (any, error) {
	p.b, p.i, p.cost = msg, 0, 0
	defer func() {
		p.b = nil
		if cap(p.stack) > maxKeptStack {
			p.stack = nil // one huge array must not pin its size for good
		}
	}()
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i < len(p.b) {
		return nil, p.errorf("unexpected data after the message at offset %d", p.i)
	}
	return v, nil
}

type jsonParser struct {
	b     []byte
	i     int
	stack []any // elements of the arrays being parsed, copied out when each closes
	// cost is what the values parsed so far take (budget.go); past limit
	// (when limit > 0) parsing stops with an error wrapping ErrLimit.
	cost, limit int64
	budget      int64 // the whole budget, for the message
	// short holds short strings seen before (message types, expression
	// tags, method names), boxed once, so that most frames allocate no
	// string at all.
	short map[string]any
}

// Bounds of jsonParser.short: strings it keeps, and their length.
const (
	maxShortStrings = 256
	maxShortString  = 32
)

// maxKeptStack bounds the scratch space a parser keeps between frames.
const maxKeptStack = 4096

// smallNumbers are the one-digit numbers, boxed once.
var smallNumbers = func() (out [10]any) {
	for i := range out {
		out[i] = json.Number(string(rune('0' + i)))
	}
	return out
}()

// charge counts n bytes of parsed values against p.limit.
func (p *jsonParser) charge(n int64) error {
	p.cost += n
	if p.limit > 0 && p.cost > p.limit {
		return budgetErrorf(p.budget, "a message of %d bytes parses into more than the %s left of the session's memory budget of %s", len(p.b), byteSize(p.limit), byteSize(p.budget))
	}
	return nil
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return &Error{Name: NameSyntaxError, Message: "invalid JSON: " + fmt.Sprintf(format, args...), Err: ErrProtocol}
}

func (p *jsonParser) unexpected() error {
	if p.i >= len(p.b) {
		return p.errorf("unexpected end of input")
	}
	return p.errorf("invalid character %q at offset %d", p.b[p.i], p.i)
}

func (p *jsonParser) skipSpace() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if p.i >= len(p.b) {
		return nil, p.unexpected()
	}
	switch c := p.b[p.i]; {
	case c == '"':
		return p.strValue()
	case c == '[':
		return p.array(depth + 1)
	case c == '{':
		return p.object(depth + 1)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.unexpected()
}

func (p *jsonParser) literal(word string) error {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		for j := 0; j < len(word); j++ {
			if p.i >= len(p.b) || p.b[p.i] != word[j] {
				return p.unexpected()
			}
			p.i++
		}
	}
	p.i += len(word)
	return nil
}

func (p *jsonParser) array(depth int) (any, error) {
	if depth > maxJSONNesting {
		return nil, p.errorf("nested more than %d deep", maxJSONNesting)
	}
	p.i++ // [
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return []any{}, nil
	}
	base := len(p.stack)
	defer func() { p.stack = p.stack[:base] }()
	for {
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		p.stack = append(p.stack, v)
		if more, err := p.separator(']'); !more {
			if err != nil {
				return nil, err
			}
			if err := p.charge(sliceBytes + slotBytes*int64(len(p.stack)-base)); err != nil {
				return nil, err
			}
			out := make([]any, len(p.stack)-base)
			copy(out, p.stack[base:])
			clear(p.stack[base:])
			return out, nil
		}
	}
}

// separator reads what follows a member of an array or object: a comma
// (more to come) or the closing bracket.
func (p *jsonParser) separator(closing byte) (more bool, err error) {
	p.skipSpace()
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case ',':
			p.i++
			return true, nil
		case closing:
			p.i++
			return false, nil
		}
	}
	return false, p.unexpected()
}

func (p *jsonParser) object(depth int) (any, error) {
	if depth > maxJSONNesting {
		return nil, p.errorf("nested more than %d deep", maxJSONNesting)
	}
	p.i++ // {
	p.skipSpace()
	if err := p.charge(objectBytes); err != nil {
		return nil, err
	}
	out := &Object{}
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return out, nil
	}
	for {
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.unexpected()
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.unexpected()
		}
		p.i++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		if err := p.charge(2*slotBytes + int64(len(k))); err != nil {
			return nil, err
		}
		out.Set(k, v)
		if more, err := p.separator('}'); !more {
			if err != nil {
				return nil, err
			}
			return out, nil
		}
	}
}

func (p *jsonParser) number() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return nil, p.unexpected()
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, p.unexpected()
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, p.unexpected()
		}
	}
	if p.i-start == 1 && p.b[start] != '-' {
		return smallNumbers[p.b[start]-'0'], nil
	}
	if err := p.charge(slotBytes + int64(p.i-start)); err != nil {
		return nil, err
	}
	return json.Number(p.b[start:p.i]), nil
}

// strValue is str boxed, from the table of short strings when it can be.
func (p *jsonParser) strValue() (any, error) {
	start := p.i + 1
	end := start
	for end < len(p.b) && end-start <= maxShortString {
		c := p.b[end]
		if c == '"' {
			break
		}
		if c < 0x20 || c == '\\' || c >= utf8.RuneSelf {
			end = len(p.b) // not a plain ASCII string: the general path
			break
		}
		end++
	}
	if end >= len(p.b) || p.b[end] != '"' {
		str, err := p.str()
		if err == nil {
			err = p.charge(slotBytes + int64(len(str)))
		}
		return str, err
	}
	raw := p.b[start:end]
	p.i = end + 1
	if v, ok := p.short[string(raw)]; ok {
		return v, nil
	}
	if err := p.charge(slotBytes + int64(len(raw))); err != nil {
		return nil, err
	}
	var v any = string(raw)
	if len(p.short) < maxShortStrings {
		if p.short == nil {
			p.short = map[string]any{}
		}
		p.short[string(raw)] = v
	}
	return v, nil
}

// digits skips a run of decimal digits and reports whether there was one.
func (p *jsonParser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// str parses a string at p.i (which holds the opening quote).
func (p *jsonParser) str() (string, error) {
	p.i++
	start := p.i
	// Fast path: no escapes, ASCII or valid UTF-8, no control characters.
	b := p.b
	i := p.i
	for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) {
		c := b[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' {
			i++
			continue
		}
		switch {
		case c == '"':
			s := string(b[start:i])
			p.i = i + 1
			return s, nil
		case c == '\\' || c < 0x20:
			p.i = i
			return p.strSlow(start)
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				p.i = i
				return p.strSlow(start)
			}
			i += n
		}
	}
	p.i = i
	return "", p.unexpected()
}

// plainWord reports whether none of the eight bytes in x ends, escapes or
// breaks a string's fast path: each is printable ASCII other than '"' and
// '\\'.
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	control := (x - ones*0x20) & ^x & highs // a byte below 0x20
	return (x&highs)|control|hasZero(x^(ones*'"'))|hasZero(x^(ones*'\\')) == 0
}

// strSlow finishes a string that has escapes, control characters or
// invalid UTF-8, from its first content byte at start.
func (p *jsonParser) strSlow(start int) (string, error) {
	out := make([]byte, 0, p.i-start+16)
	out = append(out, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return string(out), nil
		case c < 0x20:
			return "", p.errorf("invalid character %q in string at offset %d", c, p.i)
		case c == '\\':
			p.i++
			if p.i >= len(p.b) {
				return "", p.unexpected()
			}
			switch e := p.b[p.i]; e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := p.hex4(p.i + 1)
				if !ok {
					return "", p.errorf("invalid escape at offset %d", p.i-1)
				}
				p.i += 4
				if utf16.IsSurrogate(r) {
					// A pair needs a following \uXXXX low half.
					r2, ok := rune(0), false
					if p.i+6 < len(p.b) && p.b[p.i+1] == '\\' && p.b[p.i+2] == 'u' {
						r2, ok = p.hex4(p.i + 3)
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						p.i += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				}
				out = utf8.AppendRune(out, r)
			default:
				return "", p.errorf("invalid escape at offset %d", p.i-1)
			}
			p.i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			p.i++
		default:
			r, n := utf8.DecodeRune(p.b[p.i:])
			if r == utf8.RuneError && n == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, p.b[p.i:p.i+n]...)
			}
			p.i += n
		}
	}
	return "", p.unexpected()
}

// hex4 reads four hex digits at j.
func (p *jsonParser) hex4(j int) (rune, bool) {
	if j+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[j : j+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
