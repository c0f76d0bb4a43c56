package cdp

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tranquil/automation/errcode"
)

// locatorCases are the cases of testdata/locators.json, which the SDK's
// checkTarget is tested against too (runner/sdk/browser_test.ts).
type locatorCases struct {
	Cases []struct {
		Target  json.RawMessage `json:"target"`
		OK      bool            `json:"ok"`
		Invalid string          `json:"invalid"`
	} `json:"cases"`
}

func TestLocatorCheck(t *testing.T) {
	raw, err := os.ReadFile("testdata/locators.json")
	require.NoError(t, err)
	var lc locatorCases
	require.NoError(t, json.Unmarshal(raw, &lc))
	require.NotEmpty(t, lc.Cases)
	for _, c := range lc.Cases {
		require.True(t, c.OK != (c.Invalid != ""), "%s: a case is ok or invalid", c.Target)
		var l Locator
		dec := json.NewDecoder(bytes.NewReader(c.Target))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&l), "%s: the cases are well-typed locators", c.Target)
		err := l.Check()
		if c.OK {
			assert.NoError(t, err, "%s", c.Target)
			continue
		}
		var le *LocatorError
		if assert.True(t, errors.As(err, &le), "%s: %v", c.Target, err) {
			assert.Equal(t, errcode.BadTarget, le.Code)
			assert.ErrorIs(t, err, errcode.BadTarget)
			assert.Contains(t, le.Message, c.Invalid, "%s", c.Target)
		}
	}
}
