import { z } from 'zod'
import { parseWith } from '../errors.ts'
import type { Role } from '../types.ts'

/** Spec 000, Memory Compression: sizes of the single-message and batch formats. */
export const CompressorConfigSchema = z.object({
  /** Longer messages are compressed; shorter ones are kept as they are. */
  compressAboveChars: z.number().int().min(1).max(1_000_000).default(200),
  maxLineChars: z.number().int().min(10).max(100_000).default(200),
  /** Bounds that keep a batch summary small whatever the batch size. */
  maxSummaryItems: z.number().int().min(1).max(1_000).default(10),
  maxSummaryItemChars: z.number().int().min(10).max(10_000).default(80),
  maxPreservedFacts: z.number().int().min(1).max(10_000).default(30),
})
export type CompressorConfig = z.infer<typeof CompressorConfigSchema>
export const DEFAULT_COMPRESSOR_CONFIG: CompressorConfig = CompressorConfigSchema.parse({})

export function parseCompressorConfig(input?: Partial<CompressorConfig>): CompressorConfig {
  return parseWith(CompressorConfigSchema, input, 'compressor')
}

// The preserved patterns of the spec, in the order their matches are listed.
const URL = /https?:\/\/[^\s"'<>)\]]+/gi
const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g
const ERROR_MESSAGE = /\b(?:[A-Z]\w*)?(?:Error|Exception|error|failed|Failed)\b:?[^\n.;]{0,100}/g
const SELECTOR_LABEL = /\bselector:\s*['"]?([^'"\n]+?)['"]?(?=[\s,;)]|$)/gi
const QUOTED_SELECTOR = /['"]([#.][A-Za-z][\w-]*(?:[\s>+~]*[#.]?[\w-]+)*)['"]/g
const BARE_ID_SELECTOR = /(?:^|[\s(,])(#[A-Za-z][\w-]*)/g
const CLASS_ATTRIBUTE = /class="([^"]+)"/g
const ID_ATTRIBUTE = /id="([^"]+)"/g
const IPV4 = /\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b/g
const MULTI_DIGIT = /\b\d{2,}\b/g

/** Spec 000, Preserved Patterns: facts that survive compression, deduplicated in order found. */
export function extractPreservedFacts(
  content: string,
  max = DEFAULT_COMPRESSOR_CONFIG.maxPreservedFacts,
): string[] {
  const facts: string[] = []
  const seen = new Set<string>()
  const add = (fact: string | undefined) => {
    const value = fact?.trim().replace(/[.,;:]+$/, '')
    if (!value || seen.has(value) || facts.length >= max) return
    seen.add(value)
    facts.push(value)
  }
  const all = (pattern: RegExp, group = 0) => [...content.matchAll(pattern)].map((m) => m[group])

  const urls = all(URL)
  urls.forEach(add)
  all(EMAIL).forEach(add)
  all(ERROR_MESSAGE).forEach(add)
  all(SELECTOR_LABEL, 1).forEach(add)
  all(QUOTED_SELECTOR, 1).forEach(add)
  all(BARE_ID_SELECTOR, 1).forEach(add)
  for (const names of all(CLASS_ATTRIBUTE, 1)) add(`.${names?.trim().split(/\s+/).join('.')}`)
  for (const id of all(ID_ATTRIBUTE, 1)) add(`#${id}`)
  const ips = all(IPV4)
  ips.forEach(add)
  // A number already inside a kept URL or IP adds nothing.
  const inside = [...urls, ...ips, ...facts].join(' ')
  for (const number of all(MULTI_DIGIT))
    if (number && !new RegExp(`\\b${number}\\b`).test(inside)) add(number)
  return facts
}

function clip(line: string, max: number): string {
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

export interface CompressedMessage {
  content: string
  compressed: boolean
  preserved: string[]
}

/**
 * The single-message format: `[role] first line`, `... last line`, `[preserved: ...]`.
 * Messages of up to `compressAboveChars` are kept as they are (the spec: "< 200 are kept").
 */
export function compressMessage(
  message: { role: Role; content: string },
  config: Partial<CompressorConfig> = {},
): CompressedMessage {
  const cfg = Object.keys(config).length ? parseCompressorConfig(config) : DEFAULT_COMPRESSOR_CONFIG
  if (message.content.length <= cfg.compressAboveChars) {
    return { content: message.content, compressed: false, preserved: [] }
  }
  const lines = message.content
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  const first = clip(lines[0] ?? '', cfg.maxLineChars)
  const last = lines.length > 1 ? clip(lines[lines.length - 1] as string, cfg.maxLineChars) : null
  const preserved = extractPreservedFacts(message.content, cfg.maxPreservedFacts)
  const parts = [`[${message.role}] ${first}`]
  if (last) parts.push(`... ${last}`)
  if (preserved.length) parts.push(`[preserved: ${preserved.join(', ')}]`)
  return { content: parts.join('\n'), compressed: true, preserved }
}

const SPEAKER: Record<Role, string> = { user: 'User', assistant: 'Agent', tool: 'Tool', system: 'System' }

/**
 * The batch format: `[Summary of N messages]`, what was asked (`Actions:`), what came back
 * (`Results:`), and the union of preserved facts (`Key facts:`).
 */
export function summarizeMessages(
  messages: readonly { role: Role; content: string }[],
  config: Partial<CompressorConfig> = {},
): string {
  const cfg = Object.keys(config).length ? parseCompressorConfig(config) : DEFAULT_COMPRESSOR_CONFIG
  const item = (m: { role: Role; content: string }) =>
    `${SPEAKER[m.role]}: ${clip((m.content.split('\n').find((l) => l.trim()) ?? '').trim(), cfg.maxSummaryItemChars)}`
  const list = (items: string[]) => {
    const shown = items.slice(0, cfg.maxSummaryItems)
    const more = items.length - shown.length
    return `${shown.join(' | ')}${more > 0 ? ` | (+${more} more)` : ''}`
  }
  const actions = messages.filter((m) => m.role === 'user').map(item)
  const results = messages.filter((m) => m.role === 'assistant' || m.role === 'tool').map(item)
  const facts: string[] = []
  const seen = new Set<string>()
  for (const m of messages) {
    for (const fact of extractPreservedFacts(m.content, cfg.maxPreservedFacts)) {
      if (!seen.has(fact) && facts.length < cfg.maxPreservedFacts) {
        seen.add(fact)
        facts.push(fact)
      }
    }
  }
  const lines = [`[Summary of ${messages.length} messages]`]
  if (actions.length) lines.push(`Actions: ${list(actions)}`)
  if (results.length) lines.push(`Results: ${list(results)}`)
  if (facts.length) lines.push(`Key facts: ${facts.join(', ')}`)
  return lines.join('\n')
}
