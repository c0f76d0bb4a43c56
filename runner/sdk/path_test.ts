import { cleanPath, dirPath, isAbsolute, pathContains, resolvePath, toFileUrl } from "./path.ts";
import { assert, assertEquals } from "./test_helpers.ts";

Deno.test("resolvePath joins and cleans", () => {
  assertEquals(resolvePath("/a/b", "c.txt"), "/a/b/c.txt");
  assertEquals(resolvePath("/a/b", "./x/../c.txt"), "/a/b/c.txt");
  assertEquals(resolvePath("/a/b", "../../../c"), "/c");
  assertEquals(resolvePath("/a/b", "/etc/x"), "/etc/x");
  assertEquals(resolvePath("C:\\work", "out\\r.md"), "C:\\work\\out\\r.md");
  assertEquals(resolvePath("C:\\work", "D:/x/../y"), "D:\\y");
});

Deno.test("isAbsolute", () => {
  assert(isAbsolute("/x") && isAbsolute("C:\\x") && isAbsolute("c:/x"));
  assert(!isAbsolute("x") && !isAbsolute("./x") && !isAbsolute("C:x"));
});

Deno.test("toFileUrl escapes what URLs treat specially", () => {
  assertEquals(toFileUrl("/tmp/a b/#1?.ts").href, "file:///tmp/a%20b/%231%3F.ts");
  assertEquals(toFileUrl("C:\\x\\y z.ts").href, "file:///C:/x/y%20z.ts");
  let threw = false;
  try {
    toFileUrl("relative.ts");
  } catch {
    threw = true;
  }
  assert(threw);
});

Deno.test("cleanPath and dirPath read POSIX and Windows paths as Go's filepath does there", () => {
  assertEquals(cleanPath("/a//b/./c/.."), "/a/b");
  assertEquals(cleanPath("C:/a\\b\\..\\c"), "C:\\a\\c");
  assertEquals(cleanPath("C:\\.."), "C:\\");
  assertEquals(dirPath("/a/b"), "/a");
  assertEquals(dirPath("/a"), "/");
  assertEquals(dirPath("C:\\a\\b.ts"), "C:\\a");
  assertEquals(dirPath("C:\\a"), "C:\\");
});

Deno.test("pathContains compares whole segments, and Windows paths without case", () => {
  assert(pathContains("/a/b", "/a/b") && pathContains("/a/b", "/a/b/c") && pathContains("/", "/a"));
  assert(!pathContains("/a/b", "/a/bc") && !pathContains("/A/b", "/a/b/c"));
  assert(pathContains("C:\\Data", "c:\\DATA\\x.txt") && pathContains("C:\\", "c:\\x"));
  assert(!pathContains("C:\\Data", "C:\\Database"));
});
