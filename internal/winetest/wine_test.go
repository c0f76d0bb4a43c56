package winetest

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWineIsAskedOfTheSystem: `make test-windows` says it runs under Wine
// (TRANQUIL_WINETEST=wine); Wine() must find that out from the system
// itself, and elsewhere answer no.
func TestWineIsAskedOfTheSystem(t *testing.T) {
	want := os.Getenv("TRANQUIL_WINETEST") == "wine"
	assert.Equal(t, want, Wine(), "TRANQUIL_WINETEST=%q on %s", os.Getenv("TRANQUIL_WINETEST"), runtime.GOOS)
}
