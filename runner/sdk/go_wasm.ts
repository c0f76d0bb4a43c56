// Copyright 2018 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// The JavaScript half of Go's js/wasm port, from Go's
// lib/wasm/wasm_exec.js (the Go class, its imports unchanged), for the
// testing kit's rules (kit_rules.ts). Changed from the original: it is a
// module; Go's global object is a scope the caller gives (so the program's
// fs and process, and what it leaves behind, stay off the real global
// object); the program's writes go to stderr; nothing is polyfilled.
// Go's license: https://go.dev/LICENSE (BSD-3-Clause).

// deno-lint-ignore-file no-explicit-any

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8");

export class Go {
  argv = ["js"];
  env: Record<string, string> = {};
  exited = false;
  importObject: WebAssembly.Imports;
  private mem!: DataView;
  private inst: any;
  private values: any[] = [];
  private goRefCounts: number[] = [];
  private ids = new Map<any, number>();
  private idPool: number[] = [];
  // Go reads and clears the event it is called for by this name.
  _pendingEvent: any = null;
  private scheduledTimeouts = new Map<number, number>();
  private nextCallbackTimeoutID = 1;
  private resolveExit!: () => void;
  private exitPromise = new Promise<void>((resolve) => this.resolveExit = resolve);

  constructor(private readonly scope: object) {
    const setInt64 = (addr: number, v: number) => {
      this.mem.setUint32(addr + 0, v, true);
      this.mem.setUint32(addr + 4, Math.floor(v / 4294967296), true);
    };
    const getInt64 = (addr: number) => {
      const low = this.mem.getUint32(addr + 0, true);
      const high = this.mem.getInt32(addr + 4, true);
      return low + high * 4294967296;
    };
    const loadValue = (addr: number) => {
      const f = this.mem.getFloat64(addr, true);
      if (f === 0) return undefined;
      if (!isNaN(f)) return f;
      const id = this.mem.getUint32(addr, true);
      return this.values[id];
    };
    const storeValue = (addr: number, v: any) => {
      const nanHead = 0x7FF80000;
      if (typeof v === "number" && v !== 0) {
        if (isNaN(v)) {
          this.mem.setUint32(addr + 4, nanHead, true);
          this.mem.setUint32(addr, 0, true);
          return;
        }
        this.mem.setFloat64(addr, v, true);
        return;
      }
      if (v === undefined) {
        this.mem.setFloat64(addr, 0, true);
        return;
      }
      let id = this.ids.get(v);
      if (id === undefined) {
        id = this.idPool.pop();
        if (id === undefined) id = this.values.length;
        this.values[id] = v;
        this.goRefCounts[id] = 0;
        this.ids.set(v, id);
      }
      this.goRefCounts[id]++;
      let typeFlag = 0;
      switch (typeof v) {
        case "object":
          if (v !== null) typeFlag = 1;
          break;
        case "string":
          typeFlag = 2;
          break;
        case "symbol":
          typeFlag = 3;
          break;
        case "function":
          typeFlag = 4;
          break;
      }
      this.mem.setUint32(addr + 4, nanHead | typeFlag, true);
      this.mem.setUint32(addr, id, true);
    };
    const loadSlice = (addr: number) => {
      const array = getInt64(addr + 0);
      const len = getInt64(addr + 8);
      return new Uint8Array(this.inst.exports.mem.buffer, array, len);
    };
    const loadSliceOfValues = (addr: number) => {
      const array = getInt64(addr + 0);
      const len = getInt64(addr + 8);
      const a = new Array(len);
      for (let i = 0; i < len; i++) a[i] = loadValue(array + i * 8);
      return a;
    };
    const loadString = (addr: number) => {
      const saddr = getInt64(addr + 0);
      const len = getInt64(addr + 8);
      return decoder.decode(new DataView(this.inst.exports.mem.buffer, saddr, len));
    };
    // Go's SP does not change as long as no Go code is running. Some
    // operations (calls, getters and setters) may synchronously trigger a Go
    // event handler, and a goroutine can then move to a new stack; so the
    // imports below that call out read the SP again (getsp) before storing.
    // copyBytes copies what fits of src into dst, one of them a Go slice,
    // and stores the count and whether the JavaScript side was bytes.
    const copyBytes = (sp: number, dst: unknown, src: unknown) => {
      const bytes = (v: unknown) => v instanceof Uint8Array || v instanceof Uint8ClampedArray;
      if (!bytes(dst) || !bytes(src)) {
        this.mem.setUint8(sp + 48, 0);
        return;
      }
      const to = dst as Uint8Array, toCopy = (src as Uint8Array).subarray(0, to.length);
      to.set(toCopy);
      setInt64(sp + 40, toCopy.length);
      this.mem.setUint8(sp + 48, 1);
    };
    const timeOrigin = Date.now() - performance.now();
    const callResult = (sp: number, at: number, f: () => any) => {
      try {
        const result = f();
        sp = this.inst.exports.getsp() >>> 0;
        storeValue(sp + at, result);
        this.mem.setUint8(sp + at + 8, 1);
      } catch (err) {
        sp = this.inst.exports.getsp() >>> 0;
        storeValue(sp + at, err);
        this.mem.setUint8(sp + at + 8, 0);
      }
    };
    this.importObject = {
      gojs: {
        "runtime.wasmExit": (sp: number) => {
          sp >>>= 0;
          const code = this.mem.getInt32(sp + 8, true);
          this.exited = true;
          this.inst = undefined;
          this.values = [];
          this.goRefCounts = [];
          this.ids = new Map();
          this.idPool = [];
          if (code !== 0) console.warn("exit code:", code);
        },
        "runtime.wasmWrite": (sp: number) => {
          sp >>>= 0;
          const p = getInt64(sp + 16);
          const n = this.mem.getInt32(sp + 24, true);
          Deno.stderr.writeSync(new Uint8Array(this.inst.exports.mem.buffer, p, n));
        },
        "runtime.resetMemoryDataView": (sp: number) => {
          sp >>>= 0;
          this.mem = new DataView(this.inst.exports.mem.buffer);
        },
        "runtime.nanotime1": (sp: number) => {
          sp >>>= 0;
          setInt64(sp + 8, (timeOrigin + performance.now()) * 1000000);
        },
        "runtime.walltime": (sp: number) => {
          sp >>>= 0;
          const msec = new Date().getTime();
          setInt64(sp + 8, msec / 1000);
          this.mem.setInt32(sp + 16, (msec % 1000) * 1000000, true);
        },
        "runtime.scheduleTimeoutEvent": (sp: number) => {
          sp >>>= 0;
          const id = this.nextCallbackTimeoutID++;
          this.scheduledTimeouts.set(
            id,
            setTimeout(() => {
              this.resume();
              while (this.scheduledTimeouts.has(id)) {
                // Go failed to register the timeout event: try again
                // (https://github.com/golang/go/issues/28975).
                this.resume();
              }
            }, getInt64(sp + 8)),
          );
          this.mem.setInt32(sp + 16, id, true);
        },
        "runtime.clearTimeoutEvent": (sp: number) => {
          sp >>>= 0;
          const id = this.mem.getInt32(sp + 8, true);
          clearTimeout(this.scheduledTimeouts.get(id));
          this.scheduledTimeouts.delete(id);
        },
        "runtime.getRandomData": (sp: number) => {
          sp >>>= 0;
          crypto.getRandomValues(loadSlice(sp + 8));
        },
        "syscall/js.finalizeRef": (sp: number) => {
          sp >>>= 0;
          const id = this.mem.getUint32(sp + 8, true);
          this.goRefCounts[id]--;
          if (this.goRefCounts[id] === 0) {
            const v = this.values[id];
            this.values[id] = null;
            this.ids.delete(v);
            this.idPool.push(id);
          }
        },
        "syscall/js.stringVal": (sp: number) => {
          sp >>>= 0;
          storeValue(sp + 24, loadString(sp + 8));
        },
        "syscall/js.valueGet": (sp: number) => {
          sp >>>= 0;
          const result = Reflect.get(loadValue(sp + 8), loadString(sp + 16));
          sp = this.inst.exports.getsp() >>> 0;
          storeValue(sp + 32, result);
        },
        "syscall/js.valueSet": (sp: number) => {
          sp >>>= 0;
          Reflect.set(loadValue(sp + 8), loadString(sp + 16), loadValue(sp + 32));
        },
        "syscall/js.valueDelete": (sp: number) => {
          sp >>>= 0;
          Reflect.deleteProperty(loadValue(sp + 8), loadString(sp + 16));
        },
        "syscall/js.valueIndex": (sp: number) => {
          sp >>>= 0;
          storeValue(sp + 24, Reflect.get(loadValue(sp + 8), getInt64(sp + 16)));
        },
        "syscall/js.valueSetIndex": (sp: number) => {
          sp >>>= 0;
          Reflect.set(loadValue(sp + 8), getInt64(sp + 16), loadValue(sp + 24));
        },
        "syscall/js.valueCall": (sp: number) => {
          sp >>>= 0;
          callResult(sp, 56, () => {
            const v = loadValue(sp + 8);
            const m = Reflect.get(v, loadString(sp + 16));
            return Reflect.apply(m, v, loadSliceOfValues(sp + 32));
          });
        },
        "syscall/js.valueInvoke": (sp: number) => {
          sp >>>= 0;
          callResult(sp, 40, () => Reflect.apply(loadValue(sp + 8), undefined, loadSliceOfValues(sp + 16)));
        },
        "syscall/js.valueNew": (sp: number) => {
          sp >>>= 0;
          callResult(sp, 40, () => Reflect.construct(loadValue(sp + 8), loadSliceOfValues(sp + 16)));
        },
        "syscall/js.valueLength": (sp: number) => {
          sp >>>= 0;
          setInt64(sp + 16, parseInt(loadValue(sp + 8).length));
        },
        "syscall/js.valuePrepareString": (sp: number) => {
          sp >>>= 0;
          const str = encoder.encode(String(loadValue(sp + 8)));
          storeValue(sp + 16, str);
          setInt64(sp + 24, str.length);
        },
        "syscall/js.valueLoadString": (sp: number) => {
          sp >>>= 0;
          loadSlice(sp + 16).set(loadValue(sp + 8));
        },
        "syscall/js.valueInstanceOf": (sp: number) => {
          sp >>>= 0;
          this.mem.setUint8(sp + 24, (loadValue(sp + 8) instanceof loadValue(sp + 16)) ? 1 : 0);
        },
        "syscall/js.copyBytesToGo": (sp: number) => {
          sp >>>= 0;
          copyBytes(sp, loadSlice(sp + 8), loadValue(sp + 32));
        },
        "syscall/js.copyBytesToJS": (sp: number) => {
          sp >>>= 0;
          copyBytes(sp, loadValue(sp + 8), loadSlice(sp + 16));
        },
        "debug": (value: unknown) => console.log(value),
      },
    };
  }

  /**
   * run starts the program: it returns once main has ended or blocks (its
   * JavaScript functions are then ready), and the promise it returns
   * settles when the program exits.
   */
  run(instance: WebAssembly.Instance): Promise<void> {
    this.inst = instance;
    this.mem = new DataView(this.inst.exports.mem.buffer);
    // JS values Go holds references to, indexed by reference id; the
    // first are fixed (Go's predefined refs), the global object among them.
    this.values = [NaN, 0, null, true, false, this.scope, this];
    this.goRefCounts = new Array(this.values.length).fill(Infinity);
    this.ids = new Map<any, number>([[0, 1], [null, 2], [true, 3], [false, 4], [this.scope, 5], [this, 6]]);
    this.idPool = [];
    this.exited = false;

    // Command line arguments and environment variables go into linear memory.
    let offset = 4096;
    const strPtr = (str: string) => {
      const ptr = offset;
      const bytes = encoder.encode(str + "\0");
      new Uint8Array(this.mem.buffer, offset, bytes.length).set(bytes);
      offset += bytes.length;
      if (offset % 8 !== 0) offset += 8 - (offset % 8);
      return ptr;
    };
    const argc = this.argv.length;
    const argvPtrs: number[] = [];
    this.argv.forEach((arg) => argvPtrs.push(strPtr(arg)));
    argvPtrs.push(0);
    Object.keys(this.env).sort().forEach((key) => argvPtrs.push(strPtr(`${key}=${this.env[key]}`)));
    argvPtrs.push(0);
    const argv = offset;
    argvPtrs.forEach((ptr) => {
      this.mem.setUint32(offset, ptr, true);
      this.mem.setUint32(offset + 4, 0, true);
      offset += 8;
    });
    // The linker starts global data at wasmMinDataAddr at the earliest
    // (cmd/link/internal/ld/data.go).
    const wasmMinDataAddr = 4096 + 8192;
    if (offset >= wasmMinDataAddr) {
      throw new Error("total length of command line and environment variables exceeds limit");
    }
    this.inst.exports.run(argc, argv);
    if (this.exited) this.resolveExit();
    return this.exitPromise;
  }

  private resume() {
    if (this.exited) throw new Error("Go program has already exited");
    this.inst.exports.resume();
    if (this.exited) this.resolveExit();
  }

  /** Go's js.FuncOf functions call this (id is the function's). */
  _makeFuncWrapper(id: number) {
    // deno-lint-ignore no-this-alias
    const go = this;
    return function (this: unknown, ...args: unknown[]) {
      const event: any = { id, this: this, args };
      go._pendingEvent = event;
      go.resume();
      return event.result;
    };
  }
}
