import { readRun } from "./realhost.ts";
import { assert, assertEquals } from "./test_helpers.ts";

Deno.test("readRun: a host that prints no record is an error with its words, not a run", () => {
  for (
    const [stdout, want] of [
      ["", "the host made no run (exit 3)"],
      ["panic: boom\n", "the host did not print a run record (exit 3"],
      ['{"id": "r1", "sta', "the host did not print a run record (exit 3"],
      ["[1, 2]", "not a run record"],
      ['{"id": 7, "state": "failed"}', "not a run record"],
    ]
  ) {
    let err: unknown;
    try {
      readRun(stdout, "the host's own stderr\n", 3, "/tmp/x", "host");
    } catch (e) {
      err = e;
    }
    assert(err instanceof Error, `${JSON.stringify(stdout)}: no error`);
    assert(err.message.includes(want), `${JSON.stringify(stdout)}: ${err.message}`);
    assert(err.message.includes("the host's own stderr"), `${JSON.stringify(stdout)}: the host's stderr is left out`);
  }
});

Deno.test("readRun: explain shows control and bidi characters from the page or script as escapes", () => {
  const run = readRun(
    JSON.stringify({
      id: "r1",
      state: "failed",
      reason: "red \x1b[31mtext",
      output: "a\u202eb\n",
      actions: [{ method: "fill", target: 'label "x\x07"', outcome: "ok" }],
      trace: {
        calls: [{ seq: 1, method: "tab.text", atMs: 10, durationMs: 2, code: "timeout", error: "\x9b2J" }],
        navigations: [],
        failures: [],
      },
    }),
    "",
    1,
    "/tmp/x",
    "host",
  );
  assertEquals(run.state, "failed");
  assertEquals(run.output, "a\u202eb\n", "the record itself is kept as the host gave it");
  const text = run.explain();
  for (const raw of ["\x1b", "\u202e", "\x07", "\x9b"]) {
    assert(!text.includes(raw), `explain kept ${JSON.stringify(raw)}: ${text}`);
  }
  for (const esc of ["\\u001b", "\\u202e", "\\u0007", "\\u009b"]) {
    assert(text.includes(esc), `explain lacks ${esc}: ${text}`);
  }
  assert(text.includes("the whole trace: host trace --data /tmp/x r1"), text);
});
