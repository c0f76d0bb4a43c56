//go:build !js

package permissions

import (
	"fmt"
	"slices"
	"strings"
)

// Grant is one permission in canonical form: a key and, for valued keys, one
// value. Read and write values are resolved absolute paths. The pseudo-key
// "timeout" records a declared @timeout, so that changing it asks again.
type Grant struct {
	Key   string
	Value string
}

// String renders the grant as a header token, quoting the value when needed.
func (g Grant) String() string {
	if g.Value == "" {
		return g.Key
	}
	return g.Key + "=" + quoteValue(g.Value)
}

// Grants is a canonical, sorted list of grants.
type Grants []Grant

var keyOrder = map[string]int{
	"none": 0, "browser": 1, "clipboard": 2, "forms": 3, "page-js": 4, "sites": 5, "net": 6,
	"import": 7, "run": 8, "read": 9, "write": 10, "env": 11, "timeout": 12,
}

func compareGrants(a, b Grant) int {
	if c := keyOrder[a.Key] - keyOrder[b.Key]; c != 0 {
		return c
	}
	return strings.Compare(a.Value, b.Value)
}

// String is the canonical form: every grant in a fixed order, separated by
// single spaces. It is stable across releases and is what consent stores.
func (gs Grants) String() string {
	s := slices.Clone(gs)
	slices.SortFunc(s, compareGrants)
	parts := make([]string, len(s))
	for i, g := range s {
		parts[i] = g.String()
	}
	return strings.Join(parts, " ")
}

// Grants lists the header's grants in canonical order.
func (h *Header) Grants() Grants {
	var gs Grants
	add := func(on bool, key string) {
		if on {
			gs = append(gs, Grant{Key: key})
		}
	}
	add(h.None, "none")
	add(h.Browser, "browser")
	add(h.Clipboard, "clipboard")
	add(h.Forms, "forms")
	add(h.PageJS, "page-js")
	for _, l := range []struct {
		key  string
		vals []string
	}{{"sites", h.Sites}, {"net", h.Net}, {"import", h.Import}, {"run", h.Run}, {"read", resolved(h.Read)}, {"write", resolved(h.Write)}, {"env", h.Env}} {
		for _, v := range l.vals {
			gs = append(gs, Grant{l.key, v})
		}
	}
	if h.TimeoutDeclared {
		v := "none"
		if !h.NoTimeout {
			v = fmtDuration(h.Timeout)
		}
		gs = append(gs, Grant{"timeout", v})
	}
	slices.SortFunc(gs, compareGrants)
	return slices.Compact(gs)
}

func resolved(ps []Path) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Resolved
	}
	return out
}

// Canonical returns the header's canonical form; two headers that grant the
// same things have the same canonical form however they were written.
func (h *Header) Canonical() string { return h.Grants().String() }

// ParseCanonical reads back a string produced by Canonical. It checks the
// syntax and the keys, not the values: a stored approval is compared, never
// executed.
func ParseCanonical(s string) (Grants, error) {
	l := line{text: s, num: 1}
	if err := checkChars(l); err != nil {
		return nil, err
	}
	toks, err := tokenize(l, 0)
	if err != nil {
		return nil, err
	}
	var gs Grants
	for _, t := range toks {
		key, _, hasValue := strings.Cut(t.raw, "=")
		if _, ok := keyOrder[key]; !ok {
			return nil, errAt(l, t.off, t.raw, ErrUnknownKey, fmt.Sprintf("unknown key %q in canonical form", key))
		}
		if slices.Contains(bareKeys, key) {
			if hasValue {
				return nil, errAt(l, t.off, t.raw, ErrBadValue, fmt.Sprintf("%s takes no value", key))
			}
			gs = append(gs, Grant{Key: key})
			continue
		}
		if !hasValue {
			return nil, errAt(l, t.off, t.raw, ErrBadValue, fmt.Sprintf("%s needs a value", key))
		}
		vals, err := splitValues(l, t, len(key)+1)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			gs = append(gs, Grant{key, v.text})
		}
	}
	slices.SortFunc(gs, compareGrants)
	return slices.Compact(gs), nil
}

// Delta is what changed between two declarations.
type Delta struct {
	Added   Grants
	Removed Grants
}

// Empty reports whether nothing changed.
func (d Delta) Empty() bool { return len(d.Added) == 0 && len(d.Removed) == 0 }

// Diff lists the grants in next that old lacks, and those in old that next
// dropped.
func Diff(old, next Grants) Delta {
	var d Delta
	for _, g := range next {
		if !slices.Contains(old, g) {
			d.Added = append(d.Added, g)
		}
	}
	for _, g := range old {
		if !slices.Contains(next, g) {
			d.Removed = append(d.Removed, g)
		}
	}
	slices.SortFunc(d.Added, compareGrants)
	slices.SortFunc(d.Removed, compareGrants)
	return d
}

func quoteValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t,\"\\=") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(v) + `"`
}
