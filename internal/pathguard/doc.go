// Package pathguard resolves filesystem paths the way a permission grant
// must see them: first lexically, then through symlinks.
//
//   - [Resolve] returns a path's absolute lexical form and its real form,
//     resolving symlinks on the longest prefix that exists.
//   - [Contains] reports whether one path is another or one of its
//     ancestors, by whole components.
//   - [SafeName] turns untrusted text (a page's suggested file name) into
//     one file name that stays in the folder it is joined to, on every
//     system.
//
// Deno matches grants lexically and follows symlinks it meets, so a grant
// that looks narrow can reach far through a link. Resolving the longest
// existing prefix catches a link that turns a grant into an ancestor of the
// script's own folder, even when the final file does not exist yet.
//
// On Windows a junction (mount point) is followed like a symlink: Go
// reports it as an irregular directory since 1.23, but Windows, and so
// deno, goes through it.
package pathguard
