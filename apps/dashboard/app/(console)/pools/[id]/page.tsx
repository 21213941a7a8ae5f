import Link from 'next/link'
import { notFound } from 'next/navigation'
import { TimeAgo } from '../../../../components/time-ago'
import { listAgents } from '../../../../lib/api'
import { formatCount } from '../../../../lib/format'
import { MEMORY_CATEGORY_LABELS } from '../../../../lib/memories'
import { agentsOutside, membershipSummary } from '../../../../lib/pools'
// The runs pages' two-step delete button: one place for "Delete" → "Confirm delete".
import { ConfirmDelete } from '../../runs/confirm-delete'
import { deletePool, readPool, removePoolMemory } from '../actions'
import { EditPoolForm } from './edit-pool-form'
import { MembersPanel } from './members-panel'
import { ContributeForm, QueryPanel, SyncPanel } from './pool-panels'

export const dynamic = 'force-dynamic'

export default async function PoolPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params
  const [read, agents] = await Promise.all([readPool(id), listAgents()])
  if (!read.ok) throw new Error(read.message)
  if (!read.value) notFound()
  const { pool, memories } = read.value
  const renderedAt = new Date().toISOString()
  const memberIds = pool.members.map((m) => m.agentId)
  return (
    <section aria-labelledby="pool-heading">
      <header className="page-header">
        <h1 id="pool-heading">{pool.name}</h1>
        <Link href="/pools">All pools</Link>
      </header>
      {pool.description && <p>{pool.description}</p>}
      <p className="muted" data-testid="pool-summary">
        {membershipSummary(pool.members)} · {formatCount(pool.memoryCount)}{' '}
        {pool.memoryCount === 1 ? 'memory' : 'memories'} · created{' '}
        <TimeAgo date={pool.createdAt} renderedAt={renderedAt} />
      </p>

      <EditPoolForm pool={pool} />

      <MembersPanel
        poolId={pool.id}
        members={pool.members}
        outside={agentsOutside(agents, pool.members)}
        renderedAt={renderedAt}
      />

      <section className="card" aria-labelledby="pool-memories-heading">
        <h2 id="pool-memories-heading">Memories</h2>
        {memories.memories.length === 0 ? (
          <p className="empty" data-testid="pool-memories-empty">
            Nothing shared yet: a contributor adds memories with contributeToPool (or the form below).
          </p>
        ) : (
          <>
            <p className="muted" data-testid="pool-memory-count">
              {memories.totalCount} {memories.totalCount === 1 ? 'memory' : 'memories'}
              {memories.totalCount > memories.memories.length
                ? `, the newest ${memories.memories.length} shown`
                : ''}
            </p>
            <table className="data" aria-label="Pool memories">
              <thead>
                <tr>
                  <th scope="col">Memory</th>
                  <th scope="col">Category</th>
                  <th scope="col">Importance</th>
                  <th scope="col">Contributor</th>
                  <th scope="col">Added</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {memories.memories.map(({ memory, contributorAgentId }) => (
                  <tr key={memory.id} data-testid={`pool-memory-${memory.id}`}>
                    <td className="value-cell">{memory.content}</td>
                    <td>{MEMORY_CATEGORY_LABELS[memory.category] ?? memory.category}</td>
                    <td className="num">{memory.importance.toFixed(2)}</td>
                    <td data-testid="contributor">{contributorAgentId ?? '—'}</td>
                    <td>
                      <TimeAgo date={memory.createdAt} renderedAt={renderedAt} />
                    </td>
                    <td>
                      <ConfirmDelete
                        label={`Remove memory ${memory.id}`}
                        what="this memory from the pool (copies already synced into agents stay theirs)"
                        action={removePoolMemory.bind(null, pool.id, memory.id)}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      </section>

      <QueryPanel poolId={pool.id} />
      <SyncPanel poolId={pool.id} memberIds={memberIds} />
      <ContributeForm
        poolId={pool.id}
        contributorIds={pool.members.filter((m) => m.role === 'CONTRIBUTOR').map((m) => m.agentId)}
      />

      <div className="card">
        <h2>Delete the pool</h2>
        <p className="muted">
          Removes the pool, its memberships and every memory stored in it. Memories already synced into agents
          stay theirs.
        </p>
        <ConfirmDelete
          label={`Delete pool ${pool.name}`}
          what="this pool and its memories"
          action={deletePool.bind(null, pool.id)}
          then="/pools"
        />
      </div>
    </section>
  )
}
