// Package winetest adapts the library's tests to Wine, where `make
// test-windows` runs the Windows test binaries. It changes nothing outside
// a Wine run: there, the harness sets TRANQUIL_WINE_TMPROOT.
package winetest
