import { describe, expect, it } from 'vitest'
import { aggregateRepetitions, formatSpread, formatTarget } from './aggregate.ts'

describe('aggregateRepetitions', () => {
  it('takes the median of the repetitions and half their range as the spread', () => {
    const [row] = aggregateRepetitions([
      [{ name: 'a', value: 10, unit: 'ops/s' }],
      [{ name: 'a', value: 14, unit: 'ops/s' }],
      [{ name: 'a', value: 11, unit: 'ops/s' }],
    ])
    expect(row).toMatchObject({ name: 'a', value: 11, samples: [10, 14, 11], spread: 2 })
    expect(formatSpread(row!)).toBe('±18%')
  })

  it('keeps samples a suite measured itself', () => {
    const [row] = aggregateRepetitions([[{ name: 'p95', value: 5, unit: 'ms', samples: [4, 5, 9] }]])
    expect(row).toMatchObject({ value: 5, spread: 2.5, samples: [4, 5, 9] })
  })

  it('computes the ratio to a baseline repetition by repetition', () => {
    const rows = aggregateRepetitions([
      [
        { name: 'ours', value: 20, unit: 'q/s', baseline: 'peer' },
        { name: 'peer', value: 10, unit: 'q/s' },
      ],
      [
        { name: 'ours', value: 30, unit: 'q/s', baseline: 'peer' },
        { name: 'peer', value: 10, unit: 'q/s' },
      ],
      [
        { name: 'ours', value: 12, unit: 'q/s', baseline: 'peer' },
        { name: 'peer', value: 6, unit: 'q/s' },
      ],
    ])
    expect(rows.find((r) => r.name === 'ours')?.ratio).toBe(2)
    expect(rows.find((r) => r.name === 'peer')?.ratio).toBeUndefined()
  })

  it('checks a target against the median', () => {
    const [low, high] = aggregateRepetitions([
      [
        { name: 'p95', value: 12, unit: 'ms', target: { op: '<=', value: 10 } },
        { name: 'rate', value: 2_500, unit: 'req/s', target: { op: '>=', value: 2_000 } },
      ],
      [
        { name: 'p95', value: 8, unit: 'ms', target: { op: '<=', value: 10 } },
        { name: 'rate', value: 1_900, unit: 'req/s', target: { op: '>=', value: 2_000 } },
      ],
      [
        { name: 'p95', value: 9, unit: 'ms', target: { op: '<=', value: 10 } },
        { name: 'rate', value: 2_100, unit: 'req/s', target: { op: '>=', value: 2_000 } },
      ],
    ])
    expect(low?.target).toEqual({ op: '<=', value: 10, met: true })
    expect(high?.target).toEqual({ op: '>=', value: 2_000, met: true })
    expect(formatTarget(low!)).toBe('≤ 10.0 ✅')
  })

  it('says by how much a missed target is missed, as the issue table does', () => {
    const missed = (value: number, op: '<=' | '>=', goal: number) =>
      formatTarget(
        aggregateRepetitions([[{ name: 'x', value, unit: 'ms', target: { op, value: goal } }]])[0]!,
      )
    expect(missed(59, '<=', 10)).toBe('≤ 10.0 ❌ 5.9× over')
    expect(missed(1_130, '<=', 1_000)).toBe('≤ 1,000 ❌ 13% over')
    expect(missed(22, '>=', 50)).toBe('≥ 50.0 ❌ 2.3× under')
    expect(missed(0.73, '>=', 0.95)).toBe('≥ 0.950 ❌ 23% under')
    expect(missed(3, '<=', 0)).toBe('≤ 0.00 ❌ over by 3.00')
    expect(missed(9, '<=', 10)).toBe('≤ 10.0 ✅')
  })
})
