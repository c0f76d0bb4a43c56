package winetest

import "golang.org/x/sys/windows"

// Wine reports whether this program runs under Wine rather than Windows:
// Wine's ntdll exports wine_get_version, which Windows' does not.
func Wine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
