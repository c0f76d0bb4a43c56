// Package atomicfile replaces files so that a reader sees either the old
// content or the new, never a mix, even across a crash.
//
//   - [WriteFile] writes a temporary file beside the target, syncs it,
//     renames it over the target and syncs the directory.
//   - [IsTemp] recognises the temporary files a crash may leave behind, so
//     readers can ignore them.
package atomicfile
