// A minimal stand-in for the SDK's connection sequence: connect, AUTH,
// read OK or DENY, then hand the socket to the real capnweb client.
import { newWebSocketRpcSession } from "npm:capnweb@0.12.0";

const url = Deno.env.get("TRANQUIL_RPC_URL")!;
const token = Deno.env.get("TRANQUIL_RPC_TOKEN")!;
const capabilities = JSON.parse(Deno.env.get("TEST_SDK_CAPS")!);

const ws = new WebSocket(url);
await new Promise((resolve, reject) => {
  ws.addEventListener("open", resolve, { once: true });
  ws.addEventListener("error", () => reject(new Error("cannot reach the host")), { once: true });
});
const reply = new Promise<string>((resolve, reject) => {
  ws.addEventListener("message", (e) => resolve(String(e.data)), { once: true });
  ws.addEventListener("close", (e) => reject(new Error(`closed ${e.code} ${e.reason}`)), { once: true });
});
ws.send(`AUTH ${token} ${JSON.stringify({ protocol: 1, sdk: "0.1.0-test", capabilities })}`);
const first = await reply;
if (first.startsWith("DENY ")) {
  const d = JSON.parse(first.slice(5));
  console.error(`tranquil: this script cannot run: ${d.reason}`);
  Deno.exit(3);
}
if (!first.startsWith("OK ")) throw new Error("unexpected reply " + first);
const ok = JSON.parse(first.slice(3));

// deno-lint-ignore no-explicit-any
const api: any = newWebSocketRpcSession(ws);
const notified = await api.ui.notify("hello");
const tabs = await api.tabs;
let tabsCall = "no error";
try {
  await api.tabs.active();
} catch (e) {
  tabsCall = (e as Error).name;
}
console.log(JSON.stringify({ granted: ok.granted, notified, tabsAbsent: tabs === undefined, tabsCall }));
Deno.exit(0);
