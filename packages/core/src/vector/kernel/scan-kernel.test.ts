import fs from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { assembleScanKernel, WAT_FILE } from '../../../scripts/build-wasm.ts'
import { ValidationError } from '../../errors.ts'
import { seededRandom } from '../../random.ts'
import { ScanKernel, simdAvailable } from './scan-kernel.ts'
import { SCAN_KERNEL_BASE64, SCAN_KERNEL_BYTES } from './scan-wasm.ts'
import { dotScan, dotScanJs, int8Scan, int8ScanJs } from './scans.ts'

describe('the committed kernel', () => {
  it('is exactly what scan.wat assembles to (rebuild: pnpm --filter @engram/core build:wasm)', async () => {
    const built = await assembleScanKernel(fs.readFileSync(WAT_FILE, 'utf8'))
    const committed = Uint8Array.from(Buffer.from(SCAN_KERNEL_BASE64, 'base64'))
    expect(committed.length).toBe(SCAN_KERNEL_BYTES)
    expect(Buffer.from(committed).equals(Buffer.from(built))).toBe(true)
  })
})

describe('SIMD detection', () => {
  it('is on here (Node 20 has WebAssembly SIMD) and off when the engine rejects the probe', () => {
    expect(simdAvailable()).toBe(true)
    expect(simdAvailable(() => false)).toBe(false)
    expect(
      simdAvailable(() => {
        throw new Error('no WebAssembly')
      }),
    ).toBe(false)
  })
})

function randomFloats(random: () => number, length: number): Float32Array {
  return Float32Array.from({ length }, () => random() * 2 - 1)
}

describe('dotScan', () => {
  // 4 and 20 floats take only the 16-byte tail loop or both loops; 384 the 64-byte loop alone.
  it.each([4, 16, 20, 100, 384])('equals the JavaScript scan within f32 rounding at stride %i', (stride) => {
    const random = seededRandom(stride)
    const count = 1_000
    const query = randomFloats(random, stride)
    const base = randomFloats(random, count * stride)
    const expected = new Float32Array(count)
    const actual = new Float32Array(count)
    dotScanJs(query, base, count, stride, expected)
    dotScan(query, base, count, stride, actual)
    for (let n = 0; n < count; n++) {
      // f32 sums of `stride` terms of magnitude ≤ 1: error grows with the sum's size.
      expect(Math.abs((actual[n] as number) - (expected[n] as number))).toBeLessThan(1e-5 * stride)
    }
    // Not a no-op: the scores differ from vector to vector.
    expect(new Set(actual).size).toBeGreaterThan(count / 2)
  })

  it('turns away strides the kernel cannot read in whole v128s', () => {
    const out = new Float32Array(1)
    expect(() => dotScan(new Float32Array(3), new Float32Array(3), 1, 3, out)).toThrow(ValidationError)
    expect(() => int8Scan(new Int16Array(8), new Int8Array(8), 1, 8, new Int32Array(1))).toThrow(
      ValidationError,
    )
  })
})

describe('int8Scan', () => {
  it.each([16, 48, 384, 400])('equals the JavaScript scan exactly at stride %i', (stride) => {
    const random = seededRandom(stride + 7)
    const count = 1_000
    // The largest query codes the indexes use at this stride (127 × code × stride < 2^31).
    const limit = Math.min(32_767, Math.floor(2_147_483_647 / (127 * stride)))
    const query = Int16Array.from({ length: stride }, () => Math.round((random() * 2 - 1) * limit))
    const codes = Int8Array.from({ length: count * stride }, () => Math.round(random() * 254) - 127)
    // Extremes: every code at ±127 against the query's sign, the largest sum in magnitude.
    for (let i = 0; i < stride; i++) codes[i] = query[i]! >= 0 ? 127 : -127
    for (let i = 0; i < stride; i++) codes[stride + i] = query[i]! >= 0 ? -127 : 127
    const expected = new Int32Array(count)
    const actual = new Int32Array(count)
    int8ScanJs(query, codes, count, stride, expected)
    int8Scan(query, codes, count, stride, actual)
    expect(actual).toEqual(expected)
    expect(Math.abs(actual[0]!)).toBeGreaterThan(100 * limit * (stride / 4))
    expect(actual[1]).toBe(-actual[0]!)
  })
})

describe('ScanKernel', () => {
  it('pre-filters: keeps exactly the vectors scoring above the threshold, in order', () => {
    const kernel = ScanKernel.create()!
    const stride = 8
    const count = 50
    expect(kernel.reserve(1 << 20)).toBe(true)
    const buffer = kernel.buffer
    const query = new Float32Array(buffer, 0, stride)
    query.set([1, 0, 0, 0, 0, 0, 0, 0])
    const base = new Float32Array(buffer, 64, count * stride)
    for (let n = 0; n < count; n++) base[n * stride] = (n % 10) / 10
    const kept = kernel.dotScanAbove(0, 64, count, stride * 4, 0.75, 4096, 8192)
    const slots = Array.from(new Int32Array(buffer, 4096, kept))
    const scores = Array.from(new Float64Array(buffer, 8192, kept))
    expect(slots).toEqual([8, 9, 18, 19, 28, 29, 38, 39, 48, 49])
    expect(scores[0]).toBe(Math.fround(0.8))
  })

  it('grows its memory past the first page and keeps what it held', () => {
    const kernel = ScanKernel.create()!
    new Uint8Array(kernel.buffer)[100] = 42
    expect(kernel.reserve(5 * 65_536 + 1)).toBe(true)
    expect(kernel.buffer.byteLength).toBeGreaterThanOrEqual(6 * 65_536)
    expect(new Uint8Array(kernel.buffer)[100]).toBe(42)
    expect(kernel.reserve(2 ** 33)).toBe(false)
  })

  it('reads every byte when measuring bandwidth (the result depends on each)', () => {
    const kernel = ScanKernel.create()!
    kernel.reserve(1 << 16)
    const words = new Int32Array(kernel.buffer, 0, 1024)
    for (let i = 0; i < words.length; i++) words[i] = Math.imul(i + 1, 2654435761)
    let expected = 0
    for (const word of words) expected ^= word
    expect(kernel.readBandwidth(0, 4096)).toBe(expected)
  })
})

describe('without WebAssembly SIMD', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    vi.resetModules()
  })

  it('creates no kernel and scans in JavaScript, with the same results', async () => {
    const real = (globalThis as { WebAssembly?: object }).WebAssembly
    vi.stubGlobal('WebAssembly', { ...real, validate: () => false })
    vi.resetModules()
    const fresh = await import('./scans.ts')
    const kernels = await import('./scan-kernel.ts')
    expect(kernels.simdAvailable()).toBe(false)
    expect(kernels.ScanKernel.create()).toBeNull()
    const random = seededRandom(3)
    const query = Int16Array.from({ length: 32 }, () => Math.round((random() * 2 - 1) * 30_000))
    const codes = Int8Array.from({ length: 32 * 10 }, () => Math.round(random() * 254) - 127)
    const expected = new Int32Array(10)
    const actual = new Int32Array(10)
    int8ScanJs(query, codes, 10, 32, expected)
    fresh.int8Scan(query, codes, 10, 32, actual)
    expect(actual).toEqual(expected)
  })

  it('keeps an index in JavaScript, answering as the kernel does', async () => {
    const { QuantizedVectorIndex: WithKernel } = await import('../quantized.ts')
    const random = seededRandom(5)
    const vectors = Array.from({ length: 300 }, () => Float32Array.from({ length: 24 }, () => random() - 0.5))
    const withKernel = new WithKernel({ kernelAbove: 0 })
    for (const [i, vector] of vectors.entries()) withKernel.upsert(`v${i}`, vector)
    expect(withKernel.usesKernel).toBe(true)
    const real = (globalThis as { WebAssembly?: object }).WebAssembly
    vi.stubGlobal('WebAssembly', { ...real, validate: () => false })
    vi.resetModules()
    const { QuantizedVectorIndex: WithoutSimd } = await import('../quantized.ts')
    const fallback = new WithoutSimd({ kernelAbove: 0 })
    for (const [i, vector] of vectors.entries()) fallback.upsert(`v${i}`, vector)
    expect(fallback.usesKernel).toBe(false)
    for (const query of vectors.slice(0, 20)) {
      expect(fallback.search(query, 5)).toEqual(withKernel.search(query, 5))
      const exact = withKernel.searchExact(query, 5)
      const hits = fallback.searchExact(query, 5)
      expect(hits.map((h) => h.id)).toEqual(exact.map((h) => h.id))
      for (const [i, hit] of hits.entries()) expect(hit.similarity).toBeCloseTo(exact[i]!.similarity, 5)
    }
  })
})
