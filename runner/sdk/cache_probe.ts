// Loaded with --cached-only to tell whether the SDK's dependencies are in
// deno's module cache: it fails to load, and nothing else happens, when
// they are not.
import "capnweb";
