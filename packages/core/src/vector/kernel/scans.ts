import { ValidationError } from '../../errors.ts'
import { alignTo64, ScanKernel } from './scan-kernel.ts'

/**
 * The kernel's scans over plain typed arrays, for code that keeps vectors in its own buffers (an
 * ANN index scoring a posting list, say). These copy the vectors into a shared kernel's memory on
 * each call, which costs about what the scan saves on data read once: to scan the same vectors
 * many times, keep them in a `ScanKernel`'s memory as ExactVectorIndex does. The JavaScript
 * versions are the reference the kernel is tested against, and the fallback without SIMD.
 */

/** out[n] = dot(query, base[n·stride … n·stride + stride)), n < count; stride floats apart. */
export function dotScanJs(
  query: Float32Array,
  base: Float32Array,
  count: number,
  stride: number,
  out: Float32Array,
): void {
  for (let n = 0, offset = 0; n < count; n++, offset += stride) {
    let dot = 0
    for (let i = 0; i < stride; i++) dot += (base[offset + i] as number) * (query[i] as number)
    out[n] = dot
  }
}

/** out[n] = Σ codes[n·stride + i] × query[i]: int8 codes, int16 query, int32 sums. */
export function int8ScanJs(
  query: Int16Array,
  codes: Int8Array,
  count: number,
  stride: number,
  out: Int32Array,
): void {
  for (let n = 0, offset = 0; n < count; n++, offset += stride) {
    let dot = 0
    for (let i = 0; i < stride; i++) dot = (dot + (codes[offset + i] as number) * (query[i] as number)) | 0
    out[n] = dot
  }
}

let shared: ScanKernel | null | undefined

function sharedKernel(): ScanKernel | null {
  if (shared === undefined) shared = ScanKernel.create()
  return shared
}

/**
 * `dotScanJs` on the SIMD kernel where there is one. `stride` must be a multiple of 4 (vectors
 * zero-padded), for whole v128 loads. f32 sums: equal to `dotScanJs` within rounding.
 */
export function dotScan(
  query: Float32Array,
  base: Float32Array,
  count: number,
  stride: number,
  out: Float32Array,
): void {
  checkStride(stride, 4)
  const kernel = sharedKernel()
  const queryBytes = alignTo64(stride * 4)
  const vectorBytes = count * stride * 4
  if (kernel === null || !kernel.reserve(queryBytes + alignTo64(vectorBytes) + count * 4)) {
    dotScanJs(query, base, count, stride, out)
    return
  }
  const buffer = kernel.buffer
  new Float32Array(buffer, 0, stride).set(query.subarray(0, stride))
  new Float32Array(buffer, queryBytes, count * stride).set(base.subarray(0, count * stride))
  const outOffset = queryBytes + alignTo64(vectorBytes)
  kernel.dotScan(0, queryBytes, count, stride * 4, outOffset)
  out.set(new Float32Array(buffer, outOffset, count))
}

/**
 * `int8ScanJs` on the SIMD kernel where there is one; `stride` a multiple of 16 (codes padded).
 * Exactly equal to `int8ScanJs` while no sum leaves int32 (127 × the largest |query code| ×
 * stride < 2^31); past that both wrap, alike.
 */
export function int8Scan(
  query: Int16Array,
  codes: Int8Array,
  count: number,
  stride: number,
  out: Int32Array,
): void {
  checkStride(stride, 16)
  const kernel = sharedKernel()
  const queryBytes = alignTo64(stride * 2)
  const codeBytes = count * stride
  if (kernel === null || !kernel.reserve(queryBytes + alignTo64(codeBytes) + count * 4)) {
    int8ScanJs(query, codes, count, stride, out)
    return
  }
  const buffer = kernel.buffer
  new Int16Array(buffer, 0, stride).set(query.subarray(0, stride))
  new Int8Array(buffer, queryBytes, codeBytes).set(codes.subarray(0, codeBytes))
  const outOffset = queryBytes + alignTo64(codeBytes)
  kernel.int8Scan(0, queryBytes, count, stride, outOffset)
  out.set(new Int32Array(buffer, outOffset, count))
}

function checkStride(stride: number, multiple: number): void {
  if (!Number.isInteger(stride) || stride <= 0 || stride % multiple !== 0) {
    throw new ValidationError([
      {
        field: 'stride',
        message: `must be a positive multiple of ${multiple} (got ${stride})`,
        limit: multiple,
      },
    ])
  }
}
