package cdp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/errcode"
)

// A short candidate reads as it always has.
func TestCandidateString(t *testing.T) {
	c := Candidate{Tag: "input", ID: `a"b`, Name: "q", Type: "text", Label: "Café\n", Hidden: true}
	assert.Equal(t, `<input id="a\"b" name="q" type="text"> label "Café\n" (hidden)`, c.String())
	assert.Equal(t, `<option> text "v"`, Candidate{Tag: "option", Text: "v"}.String())
}

// A page's long texts (an id, an option's value, an accessible name) are
// cut in the miss a script reads, as a target's are: without the cut, the
// message quoted three names of 1 MiB each in full.
func TestCandidateStringIsBounded(t *testing.T) {
	long := strings.Repeat("é", 512<<10)
	e := &LocatorError{Code: errcode.NotFound, Target: `role "button"`, Message: "no element with that role and name",
		Candidates: []Candidate{{Tag: "button", Label: long}, {Tag: "option", ID: long, Text: long}, {Tag: "a", Name: long}}}
	msg := e.Error()
	assert.Less(t, len(msg), 2<<10, "a miss of three 1 MiB names is %d bytes", len(msg))
	assert.Contains(t, msg, `<button> label "`+strings.Repeat("é", maxShown/2)+`"… (1048576 bytes)`)
}
