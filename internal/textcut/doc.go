// Package textcut bounds text a page or a script controls before the host
// keeps it, quotes it or sends it on: [Cut] keeps a prefix of at most a
// given size, never inside a UTF-8 sequence, and says how much it left
// out, so a reader knows the text is not whole. It is pure: no files, no
// processes.
package textcut
