// Custom privacy patterns against ReDoS: `pnpm --filter @engram/api bench:privacy`.
// Through the public API in-process: an admin sets a catastrophic pattern, the agent writes the
// input that froze the server for 12 s on V8's backtracking engine, and /health is asked while the
// write is scanned. V8's own time on short inputs is measured beside it for reference.
import { type BenchRow, writeReport } from '../../../packages/core/bench/report.ts'
import { createAgentKey, createTestApp } from '../test/helpers.ts'

const POLICY = `mutation($p: [PrivacyPatternInput!]) { setPrivacyPolicy(agentId: "bench-privacy", mode: REDACT, patterns: $p) { __typename ... on ValidationError { issues { field message } } } }`
const ADD = `mutation($c: String!) { addMessage(input: { conversationId: "redos", role: USER, content: $c }) { __typename ... on Error { message } } }`

async function main() {
  const t = await createTestApp()
  const key = await createAgentKey(t, 'bench-privacy')
  const rows: BenchRow[] = []

  const writeWith = async (name: string, patterns: { name: string; pattern: string }[], content: string) => {
    const policy = await t.gql(POLICY, { p: patterns })
    if (policy.data.setPrivacyPolicy.__typename !== 'PrivacyPolicy') {
      throw new Error(`${name}: ${JSON.stringify(policy.data.setPrivacyPolicy)}`)
    }
    // The longest stretch the event loop could not answer anything (/health included).
    let longestBlock = 0
    let last = performance.now()
    const ticker = setInterval(() => {
      const now = performance.now()
      longestBlock = Math.max(longestBlock, now - last)
      last = now
    }, 1)
    const started = performance.now()
    const r = await t.gql(ADD, { c: content }, key)
    const elapsed = performance.now() - started
    clearInterval(ticker)
    longestBlock = Math.max(longestBlock, performance.now() - last)
    const health = await t.app.yoga.fetch('http://yoga/health')
    if (health.status !== 200) throw new Error(`${name}: /health answered ${health.status}`)
    const outcome = r.data.addMessage
    rows.push(
      {
        name: `${name}: addMessage`,
        value: elapsed,
        unit: 'ms',
        better: 'lower',
        note: outcome.__typename === 'Message' ? 'stored' : `${outcome.__typename}: ${outcome.message}`,
      },
      {
        name: `${name}: longest event-loop block`,
        value: longestBlock,
        unit: 'ms',
        better: 'lower',
      },
    )
  }

  const attack = `${'a'.repeat(99_999)}!`
  // The first write loads the tokenizer and warms every path: not measured.
  await t.gql(POLICY, { p: [] })
  await t.gql(ADD, { c: attack }, key)
  // What any 100,000-character write costs (tokens, full-text index, embedding) without patterns.
  await writeWith('no custom pattern on 100,000 chars', [], attack)
  await writeWith('(a+)+$ on 100,000 chars', [{ name: 'evil', pattern: '(a+)+$' }], attack)
  // The costliest shape the size limit lets through: every instruction active at every character.
  await writeWith(
    '[^!]{197}! (200 instructions) on 100,000 chars',
    [{ name: 'wide', pattern: '[^!]{197}!' }],
    attack,
  )
  await writeWith(
    'five 200-instruction patterns on 100,000 chars (time limit 1 s)',
    Array.from({ length: 5 }, (_, i) => ({ name: `wide${i}`, pattern: '[^!]{197}!' })),
    attack,
  )
  await writeWith(
    'email + phone + key patterns on 90,000 chars of prose',
    [
      { name: 'email', pattern: '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}' },
      { name: 'phone', pattern: '\\+?\\d{1,3}[-. ]?\\(?\\d{3}\\)?[-. ]?\\d{3}[-. ]?\\d{4}' },
      { name: 'api_key', pattern: '\\bsk-[A-Za-z0-9]{32,64}\\b' },
    ],
    // 90,000: redaction lengthens the text, and the stored content must stay within 100,000.
    'The quick brown fox jumps over 12 lazy dogs; write to a.b@example.com. '.repeat(1_250).slice(0, 90_000),
  )
  await t.close()

  // The old engine for reference, on inputs short enough to finish: each 2 characters ×4.
  const backtracking = /(a+)+$/u
  for (const n of [18, 20, 22, 24, 26]) {
    const started = performance.now()
    backtracking.test(`${'a'.repeat(n)}!`)
    rows.push({
      name: `V8 backtracking (a+)+$ on ${n + 1} chars`,
      value: performance.now() - started,
      unit: 'ms',
      note: 'before: 31 chars took 12.1 s',
    })
  }
  writeReport('privacy-redos', 'Custom privacy patterns on RE2 (ReDoS)', rows)
}

await main()
