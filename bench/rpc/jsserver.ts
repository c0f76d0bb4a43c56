// Benchmark peer: the capnweb JavaScript server in Deno with add and echo.
// Prints "LISTEN <port>".
import { newWebSocketRpcSession, RpcTarget } from "npm:capnweb@0.12.0";

class Api extends RpcTarget {
  add(a: number, b: number) { return a + b; }
  echo(s: string) { return s; }
}

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(`LISTEN ${port}`),
}, (req) => {
  const { socket, response } = Deno.upgradeWebSocket(req);
  newWebSocketRpcSession(socket, new Api());
  return response;
});
