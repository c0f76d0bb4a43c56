// Package importtable is the table of which modules a run may import: the
// runner's module-graph check applies it before a run, and the offline
// testing kit, compiled to WebAssembly, applies it to the same specifiers.
// It is pure: no files, no processes.
package importtable
