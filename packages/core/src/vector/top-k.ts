/**
 * The best `capacity` (score, slot) pairs seen so far: a min-heap whose root is the worst kept
 * pair. A scan compares each score with `threshold` (a plain field, so the common "not good
 * enough" case costs one comparison) and calls `push` only when it is beaten.
 */
export class TopK {
  readonly scores: Float64Array
  readonly slots: Int32Array
  size = 0
  /** The score to beat: -Infinity until the heap is full, then the worst kept score. */
  threshold = Number.NEGATIVE_INFINITY

  constructor(readonly capacity: number) {
    this.scores = new Float64Array(capacity)
    this.slots = new Int32Array(capacity)
  }

  /** Keeps (score, slot); the caller has checked `score > threshold`. */
  push(score: number, slot: number): void {
    const scores = this.scores
    const slots = this.slots
    const capacity = this.capacity
    if (this.size < capacity) {
      let i = this.size++
      while (i > 0) {
        const parent = (i - 1) >> 1
        if ((scores[parent] as number) <= score) break
        scores[i] = scores[parent] as number
        slots[i] = slots[parent] as number
        i = parent
      }
      scores[i] = score
      slots[i] = slot
    } else {
      let i = 0
      for (;;) {
        const left = 2 * i + 1
        if (left >= capacity) break
        const right = left + 1
        const child = right < capacity && (scores[right] as number) < (scores[left] as number) ? right : left
        if ((scores[child] as number) >= score) break
        scores[i] = scores[child] as number
        slots[i] = slots[child] as number
        i = child
      }
      scores[i] = score
      slots[i] = slot
    }
    if (this.size === capacity) this.threshold = scores[0] as number
  }

  /** Best first; equal scores in slot order, so results are stable. */
  sorted(): { slot: number; score: number }[] {
    const kept = Array.from({ length: this.size }, (_, i) => ({
      slot: this.slots[i] as number,
      score: this.scores[i] as number,
    }))
    return kept.sort((a, b) => b.score - a.score || a.slot - b.slot)
  }
}
