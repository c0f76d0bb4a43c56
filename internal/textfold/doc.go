// Package textfold compares text under Unicode's simple case folding, as
// strings.EqualFold and a regular expression's (?i) do, one character at
// a time so that text of megabytes from a page or a script costs a single
// pass: [Key] names a character's folding orbit, and [HasPrefix] reads
// whether text starts with a lower-case ASCII word in any of its foldings.
// It is pure: no files, no processes.
package textfold
