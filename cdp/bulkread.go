package cdp

import (
	"context"
	"errors"
	"unicode/utf16"

	"github.com/tranquil/automation/errcode"
)

// Bulk reads: what every match of a target shows or holds, or a whole
// table, in one call. They are readers (see readers.go): the isolated
// world, the page-action path, logged without what they read. Each is
// bounded in the page, before anything is sent: past MaxReadCells strings
// or MaxReadChars characters it fails errcode.LimitExceeded, and the
// reply that fits is charged to the tab's [Meter] as every reply is.

// MaxReadCells bounds the strings one bulk read returns: the matches of
// [Tab.Texts] and [Tab.Values], the cells of [Tab.Table].
const MaxReadCells = 100_000

// MaxReadChars bounds the characters (UTF-16 code units, as the page
// counts them) of one bulk read's strings together.
const MaxReadChars = 4 << 20

// Table is a table or grid as [Tab.Table] reads it.
type Table struct {
	// Headers are the names of the header row's cells; none when the
	// table has no row of column headers.
	Headers []string `json:"headers"`
	// Rows are the other rows, each its cells' names in order.
	Rows [][]string `json:"rows"`
}

// Texts returns the text every element loc matches shows (its
// innerText, as [Tab.Text] reads one), in the order [Tab.Count] counts
// them: all frames searched, hidden matches included, none when nothing
// matches. It answers at once, as Count does; a target with its own Nth
// reads that match only.
func (t *Tab) Texts(ctx context.Context, loc Locator) ([]string, error) {
	return t.readAll(ctx, "texts", "text", loc)
}

// Values returns what every field loc matches holds, as [Tab.Value]
// reads one; a match that holds no value is errcode.BadTarget.
func (t *Tab) Values(ctx context.Context, loc Locator) ([]string, error) {
	return t.readAll(ctx, "values", "value", loc)
}

func (t *Tab) readAll(ctx context.Context, method, what string, loc Locator) ([]string, error) {
	if err := loc.validate(); err != nil {
		return nil, err
	}
	out := []string{}
	err := t.forms.reader(ctx, method, loc, func(ctx context.Context) error {
		fm := t.forms
		frames, _ := fm.p.searchFrames(loc.Frame)
		if loc.Ref != "" {
			frames = []string{fm.p.frameOfRef(loc.Ref)}
		}
		frames, l, err := fm.pinScopes(ctx, frames, loc)
		if errors.Is(err, errcode.NotFound) {
			return nil // no scope, so no match
		} else if err != nil {
			return err
		}
		if l.Nth != nil {
			// Only the match the nth names is read, wherever it is: the
			// others are counted, as Count counts them, not read.
			fr, k, err := fm.nthFrame(ctx, frames, l)
			if errors.Is(err, errcode.NotFound) {
				return nil // past the matches: none
			} else if err != nil {
				return err
			}
			l.local = &k
			vals, err := t.readIn(ctx, fr, l, what, 0, 0)
			out = append(out, vals...)
			return err
		}
		chars := 0
		for i, fr := range frames {
			vals, err := t.readIn(ctx, fr, l, what, len(out), chars)
			if err != nil {
				if (i == 0 && fr == "") || errors.Is(err, errcode.LimitExceeded) || errors.Is(err, errcode.BadTarget) {
					return err
				}
				continue // a frame that went or refused meanwhile holds none
			}
			out = append(out, vals...)
			for _, v := range vals {
				chars += utf16Len(v) // the page counts UTF-16 units, as MaxReadChars says
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readIn reads what of every match of loc in frame fr (of the one its
// nth names there, when it has one), with room for
// MaxReadCells less had strings and MaxReadChars less chars characters.
func (t *Tab) readIn(ctx context.Context, fr string, loc Locator, what string, had, chars int) ([]string, error) {
	var vals []string
	err := t.forms.matchIn(ctx, fr, loc, true, func(lk *lookup, f found) error {
		if f.N == 0 {
			return nil
		}
		set := f.Set
		if n := loc.nth(); n != nil { // the one match the nth names here
			one, err := lk.call(ctx, "nthSet", f.Set, *n, "")
			if err != nil || one.N == 0 {
				return err
			}
			set = one.Set
		}
		var res struct {
			Values []string `json:"values"`
		}
		if err := t.forms.formCallIn(ctx, fr, lk.desc, &res, "readSet", set, what, MaxReadCells-had, max(MaxReadChars-chars, 0)); err != nil {
			return err
		}
		vals = res.Values
		return nil
	})
	return vals, err
}

// Table reads the table, grid, treegrid or row group loc names into rows
// of strings: a native <table> (its own rows, not a nested table's) or
// an ARIA grid, each cell by the name the accessibility tree gives it
// from its content (its text, an image's alt, a field's value, an
// aria-label in place of what it labels; hidden parts left out). The
// first row, when every cell of it is a column header (<th> in a <thead>
// or a row of <th>, role columnheader), is the headers; rows hidden from
// the tree are left out. Any other element is errcode.BadTarget. It waits
// for its target as [Tab.Text] does.
func (t *Tab) Table(ctx context.Context, loc Locator) (Table, error) {
	var tb Table
	if err := loc.validate(); err != nil {
		return tb, err
	}
	fm := t.forms
	err := fm.reader(ctx, "table", loc, func(ctx context.Context) error {
		byRef := loc.Ref != ""
		return fm.untilWith(ctx, DefaultFormWait, func(err error) bool { return readerWaits(err, byRef) }, func(ctx context.Context) error {
			ref, err := fm.pickRef(ctx, loc)
			if err != nil {
				return err
			}
			return fm.formCallIn(ctx, fm.p.frameOfRef(ref), loc.String(), &tb, "tableOf", ref, MaxReadCells, MaxReadChars)
		})
	})
	if tb.Headers == nil {
		tb.Headers = []string{}
	}
	if tb.Rows == nil {
		tb.Rows = [][]string{}
	}
	return tb, err
}

// utf16Len is the length of s in UTF-16 code units, JavaScript's length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
