package permissions

import "strings"

// token is one whitespace-separated word of a directive, quotes included.
type token struct {
	raw string
	off int // byte offset in the line
}

// value is one comma-separated element of a key's value, unquoted.
type value struct {
	text string
	off  int
}

// tokenize splits l.text from byte offset start into tokens. Double quotes
// may hide spaces inside a token; a backslash inside quotes escapes the next
// quote or backslash.
func tokenize(l line, start int) ([]token, error) {
	s := l.text
	var out []token
	i := start
	for i < len(s) {
		if s[i] == ' ' || s[i] == '\t' {
			i++
			continue
		}
		begin := i
		inQuote, quoteAt := false, 0
		for i < len(s) && (inQuote || (s[i] != ' ' && s[i] != '\t')) {
			switch {
			case inQuote && s[i] == '\\' && i+1 < len(s):
				i++
			case s[i] == '"':
				inQuote, quoteAt = !inQuote, i
			}
			i++
		}
		if inQuote {
			return nil, errAt(l, quoteAt, s[begin:], ErrSyntax, "this quote is never closed; end the value with \"")
		}
		out = append(out, token{s[begin:i], begin})
	}
	return out, nil
}

// splitValues splits the value part of t (after skip bytes of "key=") at
// commas outside quotes and unquotes each element.
func splitValues(l line, t token, skip int) ([]value, error) {
	raw := t.raw[skip:]
	base := t.off + skip
	var out []value
	start := 0
	inQuote := false
	flush := func(end int) error {
		text, off := raw[start:end], base+start
		if text == "" {
			return errAt(l, off, t.raw, ErrBadValue, "empty value; remove the extra comma or give a value")
		}
		if strings.Contains(text, `"`) {
			if len(text) < 2 || text[0] != '"' || text[len(text)-1] != '"' {
				return errAt(l, off, t.raw, ErrSyntax, `a quoted value must be quoted as a whole, like read="my notes.txt"`)
			}
			text = unescape(text[1 : len(text)-1])
			if text == "" {
				return errAt(l, off, t.raw, ErrBadValue, "empty value; give a value inside the quotes")
			}
		}
		out = append(out, value{text, off})
		return nil
	}
	for i := 0; i < len(raw); i++ {
		switch {
		case inQuote && raw[i] == '\\' && i+1 < len(raw):
			i++
		case raw[i] == '"':
			inQuote = !inQuote
		case raw[i] == ',' && !inQuote:
			if err := flush(i); err != nil {
				return nil, err
			}
			start = i + 1
		}
	}
	if err := flush(len(raw)); err != nil {
		return nil, err
	}
	return out, nil
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
