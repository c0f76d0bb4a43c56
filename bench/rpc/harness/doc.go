// Command harness benchmarks the Go Cap'n Web server against the capnweb
// JavaScript server and against the floor of a raw WebSocket round trip,
// all driven by the same Deno client. See ../README.md.
package main
