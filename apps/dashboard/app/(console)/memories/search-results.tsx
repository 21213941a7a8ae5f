import Link from 'next/link'
import { memoryHref, type ScoreComponents, SEARCH_SCOPES, type SearchHit } from '../../../lib/memories'

const COMPONENTS: { key: keyof ScoreComponents; label: string; title: string }[] = [
  { key: 'bm25', label: 'bm25', title: 'Lexical relevance (FTS5 bm25; bar relative to the best hit)' },
  { key: 'vector', label: 'vector', title: 'Cosine similarity of the embeddings' },
  { key: 'importance', label: 'importance', title: 'Importance (knowledge: confidence)' },
  { key: 'recency', label: 'recency', title: '1 for the newest candidate, falling with rank' },
  { key: 'confidence', label: 'confidence', title: 'Confidence' },
  { key: 'context', label: 'context', title: 'Dialogue context from neighbouring turns (bar relative)' },
  { key: 'decay', label: 'decay', title: 'Temporal decay factor (1: none)' },
]
/** Unbounded components get bars relative to the largest in the results; the rest are 0..1. */
const RELATIVE = new Set<keyof ScoreComponents>(['bm25', 'context'])

function MiniBar({ label, value, scale }: { label: string; value: number; scale: number }) {
  const width = Math.round(Math.min(1, Math.max(0, scale > 0 ? value / scale : 0)) * 100)
  return (
    <>
      <span className="mini-bar" role="img" aria-label={`${label} ${value.toFixed(2)}`}>
        <span className="mini-bar-fill" style={{ width: `${width}%` }} />
      </span>
      <span className="num">{value.toFixed(2)}</span>
    </>
  )
}

/** Ranked hits with every part of their score, so an operator sees why each one ranked. */
export function SearchResults({ agentId, hits }: { agentId: string; hits: SearchHit[] }) {
  const maxOf = (key: keyof ScoreComponents) => Math.max(0, ...hits.map((h) => h.components[key]))
  const maxScore = Math.max(0, ...hits.map((h) => h.score))
  return (
    <table className="data" aria-label="Search results">
      <thead>
        <tr>
          <th scope="col">Rank</th>
          <th scope="col">Scope</th>
          <th scope="col">Text</th>
          <th scope="col">Score</th>
          <th scope="col">Why it ranked</th>
        </tr>
      </thead>
      <tbody>
        {hits.map((hit, rank) => (
          <tr key={`${hit.scope}-${hit.id}`} data-testid={`hit-${hit.scope}-${hit.id}`}>
            <td>{rank + 1}</td>
            <td>{SEARCH_SCOPES[hit.scope] ?? hit.scope}</td>
            <td className="value-cell">
              {hit.scope === 'MEMORIES' ? (
                <Link href={memoryHref(agentId, hit.id, hit.text)} prefetch={false}>
                  #{hit.id}
                </Link>
              ) : (
                <span className="muted">
                  {hit.conversationId ? `${hit.conversationId} · ` : ''}#{hit.id}
                </span>
              )}{' '}
              {hit.text.length > 240 ? `${hit.text.slice(0, 240)}…` : hit.text}
            </td>
            <td data-testid="hit-score">
              <MiniBar label="score" value={hit.score} scale={maxScore} />
            </td>
            <td>
              <dl className="breakdown">
                {COMPONENTS.map(({ key, label, title }) => (
                  <div key={key} title={title} data-component={key}>
                    <dt>{label}</dt>
                    <dd>
                      <MiniBar
                        label={label}
                        value={hit.components[key]}
                        scale={RELATIVE.has(key) ? maxOf(key) : 1}
                      />
                    </dd>
                  </div>
                ))}
              </dl>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
