package cdp

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/errcode"
)

// A select whose many options all match the choice lists the first 20 in
// the error, as a select with no match does: the page decides how many
// there are, and listed in full they made an error of any size.
func TestSelectAmbiguousListsFewOptions(t *testing.T) {
	page := `<label for=s>Size</label><select id=s>` + strings.Repeat(`<option value=v>Same</option>`, 5000) + `</select>`
	tab := newTab(t, serve("/many-options", page))
	_, err := tab.Select(tctx(t, 2*time.Second), Locator{Label: "Size"}, "same", FormOptions{})
	require.ErrorIs(t, err, errcode.Ambiguous)
	assert.Contains(t, err.Error(), "several options match")
	assert.Equal(t, 20, strings.Count(err.Error(), "<option>"), "%.300s", err.Error())
}
