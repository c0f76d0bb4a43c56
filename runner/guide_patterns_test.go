package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tranquil/automation/cdp"
)

// The guide's Limits section has a row for tab.expect's RegExp holding
// the limits cdp holds a pattern to.
func TestPatternLimitsAreInTheGuide(t *testing.T) {
	section := guideSection(t, "## 7. Limits")
	i := strings.Index(section, "\n| `tab.expect` RegExp")
	require.GreaterOrEqual(t, i, 0, "the guide has no row for tab.expect's RegExp")
	row, _, _ := strings.Cut(section[i+1:], "\n")
	require.Zero(t, cdp.MaxPatternBytes%(1<<10))
	require.Zero(t, cdp.MaxMatchBytes%(1<<20))
	assert.Contains(t, row, fmt.Sprintf("source %d KiB", cdp.MaxPatternBytes>>10))
	assert.Contains(t, row, fmt.Sprintf("at most %d,%03d instructions", cdp.MaxPatternInstructions/1000, cdp.MaxPatternInstructions%1000))
	assert.Contains(t, row, fmt.Sprintf("first %d MiB", cdp.MaxMatchBytes>>20))
	assert.Contains(t, row, "`limit_exceeded`")
}
