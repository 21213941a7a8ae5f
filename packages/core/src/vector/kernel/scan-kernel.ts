import { SCAN_KERNEL_BASE64 } from './scan-wasm.ts'

/**
 * The WebAssembly SIMD scan kernel (scan.wat): dot products of one query against many vectors
 * stored back to back in the kernel's own linear memory, f32 and int8, with an optional top-k
 * pre-filter. Plain JavaScript has no SIMD, so its scans were bound by arithmetic at 22-23% of the
 * memory bandwidth; v128 does four f32 (or eight int16) multiply-adds per instruction.
 *
 * Each `ScanKernel` owns one memory: data that lives there is scanned with no copy per query.
 * `memory.grow` detaches every view of the old buffer, so owners re-create their views after
 * `reserve`. Where WebAssembly SIMD is missing (old engines, or a big-endian host, where typed-array
 * views of the little-endian memory would read bytes reversed), `ScanKernel.create` returns null
 * and callers scan in JavaScript: the same results (f32: within rounding, as the kernel sums in f32
 * where JavaScript sums in f64; int8: exactly).
 */

/** Bytes in one WebAssembly page. */
export const WASM_PAGE_BYTES = 65_536
/** wasm32 addresses at most 4 GiB; V8 grants that much on 64-bit hosts. */
export const WASM_MAX_PAGES = 65_536

/** `(module (func (result v128) (i32x4.splat (i32.const 0))))`: valid only where SIMD is. */
const SIMD_PROBE = Uint8Array.of(
  0,
  97,
  115,
  109,
  1,
  0,
  0,
  0,
  1,
  5,
  1,
  96,
  0,
  1,
  123,
  3,
  2,
  1,
  0,
  10,
  8,
  1,
  6,
  0,
  65,
  0,
  253,
  17,
  11,
)

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/**
 * The part of the WebAssembly JS API used here. Core's TypeScript lib has no DOM (where the
 * `WebAssembly` types live) and declaring the global would clash with packages that have one, so
 * the API is typed locally and read from globalThis (absent on engines without WebAssembly).
 */
interface WasmMemory {
  readonly buffer: ArrayBuffer
  grow(pages: number): number
}
interface WasmApi {
  validate(bytes: Uint8Array): boolean
  Module: new (bytes: Uint8Array) => object
  Instance: new (module: object) => { exports: unknown }
}
const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly

interface ScanExports {
  memory: WasmMemory
  dot_scan(query: number, base: number, count: number, stride: number, out: number): void
  dot_scan_above(
    query: number,
    base: number,
    count: number,
    stride: number,
    threshold: number,
    slots: number,
    scores: number,
  ): number
  int8_scan(query: number, base: number, count: number, stride: number, out: number): void
  int8_scan_above(
    query: number,
    base: number,
    count: number,
    stride: number,
    scales: number,
    threshold: number,
    slots: number,
    scores: number,
  ): number
  read_bandwidth(start: number, bytes: number): number
  accumulate_impacts(entries: number, count: number, weight: number, partial: number): void
  select_above(
    partial: number,
    count: number,
    threshold: number,
    slots: number,
    scores: number,
    zero: number,
  ): number
  sparse_dots(
    query: number,
    dims: number,
    nonZero: number,
    base: number,
    stride: number,
    slots: number,
    count: number,
    out: number,
  ): void
}

/**
 * Whether this engine runs WebAssembly SIMD. `validate` is injectable so tests can take the
 * fallback path on an engine that has SIMD.
 */
export function simdAvailable(
  validate: (bytes: Uint8Array) => boolean = (bytes) => wasm?.validate(bytes) ?? false,
): boolean {
  if (wasm === undefined || !LITTLE_ENDIAN) return false
  try {
    return validate(SIMD_PROBE)
  } catch {
    return false
  }
}

let compiled: object | null | undefined

/**
 * The compiled module, once per process; null without SIMD. Synchronous compilation: the module
 * is ~1 KB, under the 4 KB browsers allow on their main thread.
 */
function scanModule(): object | null {
  if (compiled === undefined) {
    compiled = wasm && simdAvailable() ? new wasm.Module(decodeBase64(SCAN_KERNEL_BASE64)) : null
  }
  return compiled
}

function decodeBase64(base64: string): Uint8Array {
  const text = atob(base64)
  const bytes = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i)
  return bytes
}

/** `bytes` rounded up to a multiple of 64 (a cache line), so regions start aligned. */
export function alignTo64(bytes: number): number {
  return Math.ceil(bytes / 64) * 64
}

/**
 * One instance of the kernel with its own memory. Every address and length below is in bytes;
 * strides are multiples of 16.
 */
export class ScanKernel {
  private readonly exports: ScanExports

  private constructor(api: WasmApi, module: object) {
    this.exports = new api.Instance(module).exports as ScanExports
  }

  /**
   * A kernel, or null where WebAssembly SIMD is not available or the engine refuses another memory
   * (each one reserves address space: V8 on x64 gave out ~13,000 at once here).
   */
  static create(): ScanKernel | null {
    const module = scanModule()
    if (module === null || wasm === undefined) return null
    try {
      return new ScanKernel(wasm, module)
    } catch {
      return null
    }
  }

  /** The memory's current buffer; replaced (the old one detached) by a `reserve` that grows. */
  get buffer(): ArrayBuffer {
    return this.exports.memory.buffer
  }

  /**
   * Grows the memory to hold at least `bytes`, at least doubling so growth stays amortised.
   * False when it cannot (past 4 GiB, or the host is out of memory): the memory is then unchanged.
   */
  reserve(bytes: number): boolean {
    const memory = this.exports.memory
    const have = memory.buffer.byteLength / WASM_PAGE_BYTES
    const need = Math.ceil(bytes / WASM_PAGE_BYTES)
    if (need <= have) return true
    if (need > WASM_MAX_PAGES) return false
    const pages = Math.min(WASM_MAX_PAGES, Math.max(need, have * 2))
    try {
      memory.grow(pages - have)
      return true
    } catch {
      try {
        memory.grow(need - have)
        return true
      } catch {
        return false
      }
    }
  }

  /** f32 dot products of the query at `query` with `count` vectors from `base`, to `out` (f32). */
  dotScan(query: number, base: number, count: number, stride: number, out: number): void {
    this.exports.dot_scan(query, base, count, stride, out)
  }

  /**
   * `dotScan` keeping only scores above `threshold`: their vector's index (i32) at `slots` and
   * score (f64) at `scores`, in scan order; returns how many (at most `count`).
   */
  dotScanAbove(
    query: number,
    base: number,
    count: number,
    stride: number,
    threshold: number,
    slots: number,
    scores: number,
  ): number {
    return this.exports.dot_scan_above(query, base, count, stride, threshold, slots, scores)
  }

  /** int32 dot products of int16 query codes at `query` with `count` int8 code vectors, to `out`. */
  int8Scan(query: number, base: number, count: number, stride: number, out: number): void {
    this.exports.int8_scan(query, base, count, stride, out)
  }

  /** `int8Scan` × each vector's f32 scale (at `scales`), then the pre-filter of `dotScanAbove`. */
  int8ScanAbove(
    query: number,
    base: number,
    count: number,
    stride: number,
    scales: number,
    threshold: number,
    slots: number,
    scores: number,
  ): number {
    return this.exports.int8_scan_above(query, base, count, stride, scales, threshold, slots, scores)
  }

  /**
   * Slot postings' accumulation: for each of `count` entries (i32 `slot << 8 | impact`) at
   * `entries`, adds `weight × impact` to the f32 partial score of its slot (4 bytes per slot from
   * `partial`), bit-identical to the same loop in JavaScript.
   */
  accumulateImpacts(entries: number, count: number, weight: number, partial: number): void {
    this.exports.accumulate_impacts(entries, count, weight, partial)
  }

  /**
   * The `count` partial scores (f32) at `partial` above `threshold` (an f32 value or -Infinity):
   * their indexes (i32) at `slots` and scores (f32) at `scores`, in order; with `zero`, every
   * score read is zeroed. Returns how many were kept.
   */
  selectAbove(
    partial: number,
    count: number,
    threshold: number,
    slots: number,
    scores: number,
    zero: boolean,
  ): number {
    return this.exports.select_above(partial, count, threshold, slots, scores, zero ? 1 : 0)
  }

  /**
   * f64 dot products of the query (f32 at `query`) over its `nonZero` dimensions (their byte
   * offsets, i32 at `dims`) with the vectors of `count` slots (i32 at `slots`) stored `stride`
   * bytes apart from `base`, to `out` (f64): bit-identical to the same sums in JavaScript.
   */
  sparseDots(
    query: number,
    dims: number,
    nonZero: number,
    base: number,
    stride: number,
    slots: number,
    count: number,
    out: number,
  ): void {
    this.exports.sparse_dots(query, dims, nonZero, base, stride, slots, count, out)
  }

  /** Reads `bytes` (a multiple of 64) from `start` as fast as the kernel can: for bandwidth. */
  readBandwidth(start: number, bytes: number): number {
    return this.exports.read_bandwidth(start, bytes)
  }
}
