import Link from 'next/link'
import { memoryHref, type ScoreComponents, SEARCH_SCOPES, type SearchHit } from '../../../lib/memories'

const COMPONENTS: { key: keyof ScoreComponents; label: string; title: string }[] = [
  { key: 'bm25', label: 'bm25', title: 'Lexical relevance (FTS5 bm25; bar relative to the best hit)' },
  { key: 'vector', label: 'vector', title: 'Cosine similarity of the embeddings' },
  { key: 'importance', label: 'importance', title: 'Importance (knowledge: confidence)' },
  { key: 'recency', label: 'recency', title: '1 for the newest candidate, falling with rank' },
  { key: 'confidence', label: 'confidence', title: 'Confidence' },
  { key: 'context', label: 'context', title: 'Dialogue context from neighbouring turns (bar relative)' },
  { key: 'episode', label: 'episode', title: "Share of the best score in the turn's episode (bar relative)" },
  {
    key: 'feedback',
    label: 'feedback',
    title: 'BM25 of the words standing out in the best lexical hits (bar relative)',
  },
  {
    key: 'cooccurrence',
    label: 'co-occurrence',
    title: "BM25 of words keeping company with the query's in this agent's history (bar relative)",
  },
  { key: 'time', label: 'time', title: 'Time factor: above 1 inside a period the query names' },
  { key: 'speaker', label: 'speaker', title: 'Speaker factor: above 1 for the participant the query names' },
  { key: 'decay', label: 'decay', title: 'Temporal decay factor (1: none)' },
]
/** Unbounded components get bars relative to the largest in the results; the rest are 0..1. */
const RELATIVE = new Set<keyof ScoreComponents>(['bm25', 'context', 'episode', 'feedback', 'cooccurrence'])
/** Multipliers shown as such: 1 leaves the score as it is. */
const FACTORS = new Set<keyof ScoreComponents>(['time', 'speaker'])

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

/**
 * What a hit was ranked on. With MMR a hit that repeats one above it loses rank to a lower score:
 * the cell says which hit it repeats and by how much, so rank 6 at 0.46 above rank 7 at 0.61 reads
 * as it should.
 */
function RankedOn({ hit, mmrLambda }: { hit: SearchHit; mmrLambda: number }) {
  return (
    <>
      <span className="num">{hit.mmrScore.toFixed(2)}</span>
      {mmrLambda < 1 && hit.redundantWithRank !== null && (
        <span className="muted" data-testid="hit-redundancy">
          {' '}
          repeats #{hit.redundantWithRank} ({Math.round(hit.redundancy * 100)}% overlap)
        </span>
      )}
    </>
  )
}

/** Ranked hits with every part of their score, so an operator sees why each one ranked. */
export function SearchResults({
  agentId,
  hits,
  mmrLambda,
}: {
  agentId: string
  hits: SearchHit[]
  mmrLambda: number
}) {
  const maxOf = (key: keyof ScoreComponents) => Math.max(0, ...hits.map((h) => h.components[key]))
  const maxScore = Math.max(0, ...hits.map((h) => h.score))
  const order =
    mmrLambda < 1
      ? `Ranked by MMR (λ ${mmrLambda.toFixed(2)}): ${mmrLambda.toFixed(2)} × relevance − ${(1 - mmrLambda).toFixed(2)} × overlap with a hit above. A hit that repeats one above it can rank below a lower score.`
      : 'Ranked by score.'
  return (
    <table className="data" aria-label="Search results">
      <caption className="muted" data-testid="search-order">
        {order}
      </caption>
      <thead>
        <tr>
          <th scope="col">Rank</th>
          <th scope="col">Scope</th>
          <th scope="col">Text</th>
          <th scope="col" title="λ × relevance − (1 − λ) × overlap: what the hit was ranked on">
            Ranked on
          </th>
          <th scope="col">Score</th>
          <th scope="col">Why it scored</th>
        </tr>
      </thead>
      <tbody>
        {hits.map((hit) => (
          <tr key={`${hit.scope}-${hit.id}`} data-testid={`hit-${hit.scope}-${hit.id}`}>
            <td data-testid="hit-rank">{hit.rank}</td>
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
            <td data-testid="hit-ranked-on">
              <RankedOn hit={hit} mmrLambda={mmrLambda} />
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
                      {FACTORS.has(key) ? (
                        <span className="num" data-factor={key}>
                          ×{hit.components[key].toFixed(2)}
                        </span>
                      ) : (
                        <MiniBar
                          label={label}
                          value={hit.components[key]}
                          scale={RELATIVE.has(key) ? maxOf(key) : 1}
                        />
                      )}
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
