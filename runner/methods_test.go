package runner

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tranquil/automation/rpc/capnweb"
)

// The method table and the capability objects agree: every method a
// script can call has its row, every row a method, and each row states a
// policy the interceptor can carry out. TestEveryHostMethodPassesTheGate
// holds each method to its row's gate and trace.
func TestEveryMethodHasItsRow(t *testing.T) {
	rows := map[[2]string]bool{}
	for id := range methodID(methodCount) {
		m := &methods[id]
		key := [2]string{string(m.cap), m.wire()}
		assert.False(t, rows[key], "two rows of %s.%s", m.cap, m.wire())
		rows[key] = true
		assert.NotEmpty(t, m.api, "row %d has no name", id)
		assert.Equal(t, id, methodByWire[key], m.api)
		if m.wait == waitCall {
			assert.True(t, m.tab, "%s waits its own timeout from the tab's attaching, but attaches none", m.api)
		}
		if m.page != pageNone {
			assert.True(t, m.tab, "%s keeps its page's evidence, but attaches no tab", m.api)
			assert.False(t, m.untraced, "%s keeps its page's evidence, but is not traced", m.api)
		}
		if m.gate == gateDrop || m.gate == gateReport {
			assert.NotEmpty(t, m.rate, "%s is dropped past a rate it does not name", m.api)
		}
		if m.errs == errsHost || m.errs == errsHostBrowser {
			assert.NotEqual(t, hostNone, m.host, "%s words a host's answer, but needs no host", m.api)
			assert.Equal(t, waitHost, m.wait, "%s words a host past the host's wait, which it does not set", m.api)
		}
	}
	found := 0
	for _, c := range hostAPI {
		obj := reflect.TypeOf(c.build(nil))
		for i := range obj.NumMethod() {
			name := obj.Method(i).Name
			if name == "ArgError" && obj.Implements(reflect.TypeFor[capnweb.StrictArgs]()) {
				continue
			}
			found++
			assert.True(t, rows[[2]string{string(c.cap), capnweb.JSName(name)}], "%s.%s has no row in the method table", c.cap, capnweb.JSName(name))
		}
	}
	assert.Equal(t, int(methodCount), found, "a row names a method no capability object has")
	assert.Equal(t, "tab.fill", apiOf(capForms, "fill"), "forms' methods are called on a tab")
	assert.Equal(t, "tab.nosuch", apiOf(capTab, "nosuch"))
}
