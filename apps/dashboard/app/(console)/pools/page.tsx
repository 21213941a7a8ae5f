import Link from 'next/link'
import { TimeAgo } from '../../../components/time-ago'
import { listAgents } from '../../../lib/api'
import { formatCount } from '../../../lib/format'
import { membershipSummary, poolHref } from '../../../lib/pools'
import { readPools } from './actions'
import { CreatePoolForm } from './create-pool-form'

export const dynamic = 'force-dynamic'

export default async function PoolsPage() {
  const [pools, agents] = await Promise.all([readPools(), listAgents()])
  if (!pools.ok) throw new Error(pools.message)
  const renderedAt = new Date().toISOString()
  return (
    <section aria-labelledby="pools-heading">
      <header className="page-header">
        <h1 id="pools-heading">Memory pools</h1>
      </header>
      <p className="muted">
        Memory shared between agents: a Reader reads a pool, a Contributor reads and adds to it. Contributions
        go through the same verification as an agent’s own memories (duplicates and contradictions are
        caught), and a member can sync a pool into its own memories.
      </p>
      <CreatePoolForm agents={agents} />
      {pools.value.length === 0 ? (
        <p className="empty" data-testid="pools-empty">
          No pools yet.
        </p>
      ) : (
        <table className="data" aria-label="Pools">
          <thead>
            <tr>
              <th scope="col">Pool</th>
              <th scope="col">Members</th>
              <th scope="col">Memories</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {pools.value.map((pool) => (
              <tr key={pool.id} data-testid={`pool-${pool.name}`}>
                <th scope="row">
                  <Link href={poolHref(pool.id)}>{pool.name}</Link>
                  {pool.description && <div className="muted">{pool.description}</div>}
                </th>
                <td
                  data-testid="pool-members"
                  title={pool.members.map((m) => `${m.agentId} (${m.role.toLowerCase()})`).join(', ')}
                >
                  {membershipSummary(pool.members)}
                </td>
                <td className="num" data-testid="pool-memories">
                  {formatCount(pool.memoryCount)}
                </td>
                <td>
                  <TimeAgo date={pool.createdAt} renderedAt={renderedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
