import { isAbsolute, resolvePath, toFileUrl } from "./path.ts";
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
