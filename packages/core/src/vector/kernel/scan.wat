;; The vector scan kernel: one query against many vectors laid out back to back in this module's
;; memory, with WebAssembly SIMD (v128). Built by `pnpm --filter @engram/core build:wasm` into
;; scan-wasm.ts (the bytes as base64, so core loads them without I/O); a test rebuilds this file
;; and compares, so the committed bytes cannot drift from it.
;;
;; Every address and length is in bytes. A stride (the distance between two vectors) is a multiple
;; of 16 bytes, so each vector is read in whole v128 loads: the callers pad vectors with zeros.
;; Loads are unaligned-safe (v128.load allows any address); callers align to 64 anyway.
(module
  (memory (export "memory") 1)

  ;; dot(query, vector) over `bytes` bytes of f32. Four accumulators over 64-byte steps let the
  ;; CPU overlap the adds (one accumulator made each add wait for the previous one); the 16-byte
  ;; loop after them takes a stride that is not a multiple of 64.
  (func $dot (param $q i32) (param $v i32) (param $bytes i32) (result f32)
    (local $i i32) (local $main i32)
    (local $a v128) (local $b v128) (local $c v128) (local $d v128)
    (local.set $main (i32.and (local.get $bytes) (i32.const -64)))
    (block $main_done
      (loop $main_loop
        (br_if $main_done (i32.ge_u (local.get $i) (local.get $main)))
        (local.set $a (f32x4.add (local.get $a)
          (f32x4.mul (v128.load (i32.add (local.get $v) (local.get $i)))
                     (v128.load (i32.add (local.get $q) (local.get $i))))))
        (local.set $b (f32x4.add (local.get $b)
          (f32x4.mul (v128.load offset=16 (i32.add (local.get $v) (local.get $i)))
                     (v128.load offset=16 (i32.add (local.get $q) (local.get $i))))))
        (local.set $c (f32x4.add (local.get $c)
          (f32x4.mul (v128.load offset=32 (i32.add (local.get $v) (local.get $i)))
                     (v128.load offset=32 (i32.add (local.get $q) (local.get $i))))))
        (local.set $d (f32x4.add (local.get $d)
          (f32x4.mul (v128.load offset=48 (i32.add (local.get $v) (local.get $i)))
                     (v128.load offset=48 (i32.add (local.get $q) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 64)))
        (br $main_loop)))
    (block $tail_done
      (loop $tail_loop
        (br_if $tail_done (i32.ge_u (local.get $i) (local.get $bytes)))
        (local.set $a (f32x4.add (local.get $a)
          (f32x4.mul (v128.load (i32.add (local.get $v) (local.get $i)))
                     (v128.load (i32.add (local.get $q) (local.get $i))))))
        (local.set $i (i32.add (local.get $i) (i32.const 16)))
        (br $tail_loop)))
    (local.set $a (f32x4.add (f32x4.add (local.get $a) (local.get $b))
                             (f32x4.add (local.get $c) (local.get $d))))
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
      (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a)))))

  ;; The integer dot product of `bytes` int8 codes at $v with the query's int16 codes at $q (two
  ;; bytes per code). Codes are widened to int16 and multiplied pairwise into int32 lanes
  ;; (i32x4.dot_i16x8_s): exact as long as the callers bound the query's codes so the sum stays
  ;; within int32 (127 × largest query code × codes < 2^31), which they do. 64 codes a step (one
  ;; cache line), the query pointer stepping alongside, then 16 at a time.
  (func $int8_dot (param $q i32) (param $v i32) (param $bytes i32) (result i32)
    (local $end i32) (local $main i32) (local $codes v128) (local $codes2 v128)
    (local $a v128) (local $b v128) (local $c v128) (local $d v128)
    (local.set $end (i32.add (local.get $v) (local.get $bytes)))
    (local.set $main (i32.add (local.get $v) (i32.and (local.get $bytes) (i32.const -64))))
    (block $main_done
      (loop $main_loop
        (br_if $main_done (i32.ge_u (local.get $v) (local.get $main)))
        (local.set $codes (v128.load (local.get $v)))
        (local.set $codes2 (v128.load offset=16 (local.get $v)))
        (local.set $a (i32x4.add (local.get $a)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $codes)) (v128.load (local.get $q)))))
        (local.set $b (i32x4.add (local.get $b)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $codes)) (v128.load offset=16 (local.get $q)))))
        (local.set $c (i32x4.add (local.get $c)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $codes2)) (v128.load offset=32 (local.get $q)))))
        (local.set $d (i32x4.add (local.get $d)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $codes2)) (v128.load offset=48 (local.get $q)))))
        (local.set $codes (v128.load offset=32 (local.get $v)))
        (local.set $codes2 (v128.load offset=48 (local.get $v)))
        (local.set $a (i32x4.add (local.get $a)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $codes)) (v128.load offset=64 (local.get $q)))))
        (local.set $b (i32x4.add (local.get $b)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $codes)) (v128.load offset=80 (local.get $q)))))
        (local.set $c (i32x4.add (local.get $c)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $codes2)) (v128.load offset=96 (local.get $q)))))
        (local.set $d (i32x4.add (local.get $d)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $codes2)) (v128.load offset=112 (local.get $q)))))
        (local.set $v (i32.add (local.get $v) (i32.const 64)))
        (local.set $q (i32.add (local.get $q) (i32.const 128)))
        (br $main_loop)))
    (block $tail_done
      (loop $tail_loop
        (br_if $tail_done (i32.ge_u (local.get $v) (local.get $end)))
        (local.set $codes (v128.load (local.get $v)))
        (local.set $a (i32x4.add (local.get $a)
          (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $codes)) (v128.load (local.get $q)))))
        (local.set $b (i32x4.add (local.get $b)
          (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $codes)) (v128.load offset=16 (local.get $q)))))
        (local.set $v (i32.add (local.get $v) (i32.const 16)))
        (local.set $q (i32.add (local.get $q) (i32.const 32)))
        (br $tail_loop)))
    (local.set $a (i32x4.add (i32x4.add (local.get $a) (local.get $b))
                             (i32x4.add (local.get $c) (local.get $d))))
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
      (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))

  ;; Writes the f32 dot product of the query with each of `count` vectors to $out (4 bytes each).
  (func (export "dot_scan")
    (param $q i32) (param $base i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $n) (local.get $count)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2)))
          (call $dot (local.get $q) (local.get $base) (local.get $stride)))
        (local.set $base (i32.add (local.get $base) (local.get $stride)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next))))

  ;; The top-k pre-filter: only vectors scoring above $threshold are written, their index (i32 at
  ;; $slots) and score (f64 at $scores); returns how many. The caller's threshold only rises as it
  ;; keeps better scores, so one taken at the start of a block never drops a vector it would keep,
  ;; and it is spared reading every score back.
  (func (export "dot_scan_above")
    (param $q i32) (param $base i32) (param $count i32) (param $stride i32) (param $threshold f64)
    (param $slots i32) (param $scores i32) (result i32)
    (local $n i32) (local $kept i32) (local $score f64)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $n) (local.get $count)))
        (local.set $score
          (f64.promote_f32 (call $dot (local.get $q) (local.get $base) (local.get $stride))))
        (if (f64.gt (local.get $score) (local.get $threshold))
          (then
            (i32.store (i32.add (local.get $slots) (i32.shl (local.get $kept) (i32.const 2)))
              (local.get $n))
            (f64.store (i32.add (local.get $scores) (i32.shl (local.get $kept) (i32.const 3)))
              (local.get $score))
            (local.set $kept (i32.add (local.get $kept) (i32.const 1)))))
        (local.set $base (i32.add (local.get $base) (local.get $stride)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $kept))

  ;; Writes the int32 dot product of the int16 query codes with each of `count` int8 code vectors
  ;; ($stride bytes apart) to $out (4 bytes each).
  (func (export "int8_scan")
    (param $q i32) (param $base i32) (param $count i32) (param $stride i32) (param $out i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $n) (local.get $count)))
        (i32.store (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2)))
          (call $int8_dot (local.get $q) (local.get $base) (local.get $stride)))
        (local.set $base (i32.add (local.get $base) (local.get $stride)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next))))

  ;; int8_scan with each dot product times its vector's f32 scale (at $scales, 4 bytes per vector)
  ;; in f64, as JavaScript computes it, and the top-k pre-filter of dot_scan_above.
  (func (export "int8_scan_above")
    (param $q i32) (param $base i32) (param $count i32) (param $stride i32) (param $scales i32)
    (param $threshold f64) (param $slots i32) (param $scores i32) (result i32)
    (local $n i32) (local $kept i32) (local $score f64)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $n) (local.get $count)))
        (local.set $score
          (f64.mul
            (f64.convert_i32_s (call $int8_dot (local.get $q) (local.get $base) (local.get $stride)))
            (f64.promote_f32 (f32.load (i32.add (local.get $scales) (i32.shl (local.get $n) (i32.const 2)))))))
        (if (f64.gt (local.get $score) (local.get $threshold))
          (then
            (i32.store (i32.add (local.get $slots) (i32.shl (local.get $kept) (i32.const 2)))
              (local.get $n))
            (f64.store (i32.add (local.get $scores) (i32.shl (local.get $kept) (i32.const 3)))
              (local.get $score))
            (local.set $kept (i32.add (local.get $kept) (i32.const 1)))))
        (local.set $base (i32.add (local.get $base) (local.get $stride)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $kept))

  ;; Slot postings (slot-postings.ts): adds weight × impact to the partial score (f32 at $partial,
  ;; 4 bytes per slot) of each entry's slot, for `count` entries at $entries, each an i32
  ;; `slot << 8 | impact`. The arithmetic is JavaScript's (f32 score promoted to f64, the product
  ;; and sum in f64, rounded back to f32), so the scores are bit-identical to the JavaScript loop's.
  ;; This is random read-modify-write, which SIMD cannot gather: the gain over JavaScript is the
  ;; missing bounds checks and tagging, and four independent updates per step (a slot is in a list
  ;; once, so the four never touch the same score).
  (func (export "accumulate_impacts")
    (param $entries i32) (param $count i32) (param $weight f64) (param $partial i32)
    (local $end i32) (local $main i32) (local $entry i32) (local $at i32)
    (local.set $end (i32.add (local.get $entries) (i32.shl (local.get $count) (i32.const 2))))
    (local.set $main (i32.add (local.get $entries)
      (i32.shl (i32.and (local.get $count) (i32.const -4)) (i32.const 2))))
    (block $main_done
      (loop $main_loop
        (br_if $main_done (i32.ge_u (local.get $entries) (local.get $main)))
        (local.set $at (i32.add (local.get $partial) (i32.shl (i32.shr_u
          (local.tee $entry (i32.load (local.get $entries))) (i32.const 8)) (i32.const 2))))
        (f32.store (local.get $at)
          (f32.demote_f64 (f64.add (f64.promote_f32 (f32.load (local.get $at)))
            (f64.mul (local.get $weight)
              (f64.convert_i32_u (i32.and (local.get $entry) (i32.const 255)))))))
        (local.set $at (i32.add (local.get $partial) (i32.shl (i32.shr_u
          (local.tee $entry (i32.load offset=4 (local.get $entries))) (i32.const 8)) (i32.const 2))))
        (f32.store (local.get $at)
          (f32.demote_f64 (f64.add (f64.promote_f32 (f32.load (local.get $at)))
            (f64.mul (local.get $weight)
              (f64.convert_i32_u (i32.and (local.get $entry) (i32.const 255)))))))
        (local.set $at (i32.add (local.get $partial) (i32.shl (i32.shr_u
          (local.tee $entry (i32.load offset=8 (local.get $entries))) (i32.const 8)) (i32.const 2))))
        (f32.store (local.get $at)
          (f32.demote_f64 (f64.add (f64.promote_f32 (f32.load (local.get $at)))
            (f64.mul (local.get $weight)
              (f64.convert_i32_u (i32.and (local.get $entry) (i32.const 255)))))))
        (local.set $at (i32.add (local.get $partial) (i32.shl (i32.shr_u
          (local.tee $entry (i32.load offset=12 (local.get $entries))) (i32.const 8)) (i32.const 2))))
        (f32.store (local.get $at)
          (f32.demote_f64 (f64.add (f64.promote_f32 (f32.load (local.get $at)))
            (f64.mul (local.get $weight)
              (f64.convert_i32_u (i32.and (local.get $entry) (i32.const 255)))))))
        (local.set $entries (i32.add (local.get $entries) (i32.const 16)))
        (br $main_loop)))
    (block $tail_done
      (loop $tail_loop
        (br_if $tail_done (i32.ge_u (local.get $entries) (local.get $end)))
        (local.set $at (i32.add (local.get $partial) (i32.shl (i32.shr_u
          (local.tee $entry (i32.load (local.get $entries))) (i32.const 8)) (i32.const 2))))
        (f32.store (local.get $at)
          (f32.demote_f64 (f64.add (f64.promote_f32 (f32.load (local.get $at)))
            (f64.mul (local.get $weight)
              (f64.convert_i32_u (i32.and (local.get $entry) (i32.const 255)))))))
        (local.set $entries (i32.add (local.get $entries) (i32.const 4)))
        (br $tail_loop))))

  ;; Keeps the partial score at $at when above $threshold: its index (i32 at $slots) and score (f32
  ;; at $scores); returns the new count kept.
  (func $keep_above (param $at i32) (param $n i32) (param $threshold f32) (param $slots i32)
    (param $scores i32) (param $kept i32) (result i32)
    (local $score f32)
    (local.set $score (f32.load (local.get $at)))
    (if (f32.gt (local.get $score) (local.get $threshold))
      (then
        (i32.store (i32.add (local.get $slots) (i32.shl (local.get $kept) (i32.const 2))) (local.get $n))
        (f32.store (i32.add (local.get $scores) (i32.shl (local.get $kept) (i32.const 2))) (local.get $score))
        (local.set $kept (i32.add (local.get $kept) (i32.const 1)))))
    (local.get $kept))

  ;; The candidates' pre-filter over `count` partial scores (f32 at $partial): those above
  ;; $threshold are written in slot order (index at $slots, score at $scores), and with $zero set
  ;; every score read is zeroed for the next search; returns how many were kept. 16 scores are compared a step
  ;; (four f32x4.gt): once the caller's top-k is full most steps keep none and cost four loads,
  ;; four compares and four zeroing stores. The threshold is an f32 value (-Infinity or a kept
  ;; partial score), so comparing in f32 decides as JavaScript's f64 comparison does.
  (func (export "select_above")
    (param $partial i32) (param $count i32) (param $threshold f32) (param $slots i32)
    (param $scores i32) (param $zero i32) (result i32)
    (local $n i32) (local $main i32) (local $kept i32) (local $at i32) (local $lane i32)
    (local $limit v128)
    (local.set $limit (f32x4.splat (local.get $threshold)))
    (local.set $main (i32.and (local.get $count) (i32.const -16)))
    (block $main_done
      (loop $main_loop
        (br_if $main_done (i32.ge_u (local.get $n) (local.get $main)))
        (local.set $at (i32.add (local.get $partial) (i32.shl (local.get $n) (i32.const 2))))
        (if (v128.any_true
              (v128.or
                (v128.or (f32x4.gt (v128.load (local.get $at)) (local.get $limit))
                         (f32x4.gt (v128.load offset=16 (local.get $at)) (local.get $limit)))
                (v128.or (f32x4.gt (v128.load offset=32 (local.get $at)) (local.get $limit))
                         (f32x4.gt (v128.load offset=48 (local.get $at)) (local.get $limit)))))
          (then
            (local.set $lane (i32.const 0))
            (loop $lanes
              (local.set $kept (call $keep_above
                (i32.add (local.get $at) (i32.shl (local.get $lane) (i32.const 2)))
                (i32.add (local.get $n) (local.get $lane))
                (local.get $threshold) (local.get $slots) (local.get $scores) (local.get $kept)))
              (local.set $lane (i32.add (local.get $lane) (i32.const 1)))
              (br_if $lanes (i32.lt_u (local.get $lane) (i32.const 16))))))
        (if (local.get $zero)
          (then
            (v128.store (local.get $at) (v128.const i32x4 0 0 0 0))
            (v128.store offset=16 (local.get $at) (v128.const i32x4 0 0 0 0))
            (v128.store offset=32 (local.get $at) (v128.const i32x4 0 0 0 0))
            (v128.store offset=48 (local.get $at) (v128.const i32x4 0 0 0 0))))
        (local.set $n (i32.add (local.get $n) (i32.const 16)))
        (br $main_loop)))
    (block $tail_done
      (loop $tail_loop
        (br_if $tail_done (i32.ge_u (local.get $n) (local.get $count)))
        (local.set $at (i32.add (local.get $partial) (i32.shl (local.get $n) (i32.const 2))))
        (local.set $kept (call $keep_above (local.get $at) (local.get $n) (local.get $threshold)
          (local.get $slots) (local.get $scores) (local.get $kept)))
        (if (local.get $zero) (then (f32.store (local.get $at) (f32.const 0))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $tail_loop)))
    (local.get $kept))

  ;; Exact dot products of a sparse query with chosen vectors (slot postings' rescoring): for each
  ;; of `count` slots (i32 at $slots), the vector at $base + slot × $stride, summed over the query's
  ;; `nnz` non-zero dimensions (their byte offsets, i32 at $dims; the query's f32 values at $q), to
  ;; $out (f64). Products and sum in f64 in dimension order, as the JavaScript rescoring does, so
  ;; the scores are bit-identical to it. Each candidate is a few dozen scattered loads into a large
  ;; buffer, each likely a cache miss: four candidates go side by side, so four misses are in
  ;; flight at once (one candidate's loads alone fill the CPU's reorder window before the next
  ;; candidate's could start).
  (func (export "sparse_dots")
    (param $q i32) (param $dims i32) (param $nnz i32) (param $base i32) (param $stride i32)
    (param $slots i32) (param $count i32) (param $out i32)
    (local $n i32) (local $j i32) (local $offset i32) (local $end i32) (local $main i32) (local $qv f64)
    (local $v0 i32) (local $v1 i32) (local $v2 i32) (local $v3 i32)
    (local $d0 f64) (local $d1 f64) (local $d2 f64) (local $d3 f64)
    (local.set $end (i32.add (local.get $dims) (i32.shl (local.get $nnz) (i32.const 2))))
    (local.set $main (i32.and (local.get $count) (i32.const -4)))
    (block $main_done
      (loop $main_next
        (br_if $main_done (i32.ge_u (local.get $n) (local.get $main)))
        (local.set $v0 (i32.add (local.get $base)
          (i32.mul (i32.load offset=0 (i32.add (local.get $slots) (i32.shl (local.get $n) (i32.const 2))))
                   (local.get $stride))))
        (local.set $v1 (i32.add (local.get $base)
          (i32.mul (i32.load offset=4 (i32.add (local.get $slots) (i32.shl (local.get $n) (i32.const 2))))
                   (local.get $stride))))
        (local.set $v2 (i32.add (local.get $base)
          (i32.mul (i32.load offset=8 (i32.add (local.get $slots) (i32.shl (local.get $n) (i32.const 2))))
                   (local.get $stride))))
        (local.set $v3 (i32.add (local.get $base)
          (i32.mul (i32.load offset=12 (i32.add (local.get $slots) (i32.shl (local.get $n) (i32.const 2))))
                   (local.get $stride))))
        (local.set $d0 (f64.const 0))
        (local.set $d1 (f64.const 0))
        (local.set $d2 (f64.const 0))
        (local.set $d3 (f64.const 0))
        (local.set $j (local.get $dims))
        (block $dims_done
          (loop $dims_next
            (br_if $dims_done (i32.ge_u (local.get $j) (local.get $end)))
            (local.set $offset (i32.load (local.get $j)))
            (local.set $qv (f64.promote_f32 (f32.load (i32.add (local.get $q) (local.get $offset)))))
            (local.set $d0 (f64.add (local.get $d0)
              (f64.mul (f64.promote_f32 (f32.load (i32.add (local.get $v0) (local.get $offset))))
                       (local.get $qv))))
            (local.set $d1 (f64.add (local.get $d1)
              (f64.mul (f64.promote_f32 (f32.load (i32.add (local.get $v1) (local.get $offset))))
                       (local.get $qv))))
            (local.set $d2 (f64.add (local.get $d2)
              (f64.mul (f64.promote_f32 (f32.load (i32.add (local.get $v2) (local.get $offset))))
                       (local.get $qv))))
            (local.set $d3 (f64.add (local.get $d3)
              (f64.mul (f64.promote_f32 (f32.load (i32.add (local.get $v3) (local.get $offset))))
                       (local.get $qv))))
            (local.set $j (i32.add (local.get $j) (i32.const 4)))
            (br $dims_next)))
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 3))) (local.get $d0))
        (f64.store offset=8 (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 3))) (local.get $d1))
        (f64.store offset=16 (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 3))) (local.get $d2))
        (f64.store offset=24 (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 3))) (local.get $d3))
        (local.set $n (i32.add (local.get $n) (i32.const 4)))
        (br $main_next)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $n) (local.get $count)))
        (local.set $v0 (i32.add (local.get $base)
          (i32.mul (i32.load offset=0 (i32.add (local.get $slots) (i32.shl (local.get $n) (i32.const 2))))
                   (local.get $stride))))
        (local.set $d0 (f64.const 0))
        (local.set $j (local.get $dims))
        (block $dims_done
          (loop $dims_next
            (br_if $dims_done (i32.ge_u (local.get $j) (local.get $end)))
            (local.set $offset (i32.load (local.get $j)))
            (local.set $qv (f64.promote_f32 (f32.load (i32.add (local.get $q) (local.get $offset)))))
            (local.set $d0 (f64.add (local.get $d0)
              (f64.mul (f64.promote_f32 (f32.load (i32.add (local.get $v0) (local.get $offset))))
                       (local.get $qv))))
            (local.set $j (i32.add (local.get $j) (i32.const 4)))
            (br $dims_next)))
        (f64.store (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 3))) (local.get $d0))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next))))

  ;; Reads `bytes` bytes (a multiple of 64) from $start with the scans' loads and as little work
  ;; per byte as possible: the machine's read bandwidth as this kernel sees it. Returns a value
  ;; depending on every byte, so the reads cannot be skipped.
  (func (export "read_bandwidth") (param $start i32) (param $bytes i32) (result i32)
    (local $p i32) (local $end i32)
    (local $a v128) (local $b v128) (local $c v128) (local $d v128)
    (local.set $p (local.get $start))
    (local.set $end (i32.add (local.get $start) (local.get $bytes)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $a (v128.xor (local.get $a) (v128.load (local.get $p))))
        (local.set $b (v128.xor (local.get $b) (v128.load offset=16 (local.get $p))))
        (local.set $c (v128.xor (local.get $c) (v128.load offset=32 (local.get $p))))
        (local.set $d (v128.xor (local.get $d) (v128.load offset=48 (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 64)))
        (br $next)))
    (local.set $a (v128.xor (v128.xor (local.get $a) (local.get $b))
                            (v128.xor (local.get $c) (local.get $d))))
    (i32.xor
      (i32.xor (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
      (i32.xor (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))
)
