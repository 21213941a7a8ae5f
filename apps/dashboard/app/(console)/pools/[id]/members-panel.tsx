'use client'

import { useRouter } from 'next/navigation'
import { useActionState, useState, useTransition } from 'react'
import { ConfirmActions } from '../../../../components/confirm-actions'
import { FieldError, FormError } from '../../../../components/form-fields'
import { TimeAgo } from '../../../../components/time-ago'
import { POOL_ROLE_LABELS, type PoolMember, type PoolRole } from '../../../../lib/pools'
import { addPoolMember, type PoolFormState, removePoolMember, setPoolMember } from '../actions'

/**
 * A pool's members: each one's role (changed in place), removal (asked first, optionally with the
 * memories it contributed), and a form adding an agent that is not a member yet.
 */
export function MembersPanel({
  poolId,
  members,
  outside,
  renderedAt,
}: {
  poolId: string
  members: PoolMember[]
  /** Agents that may be added. */
  outside: { id: string; name: string }[]
  renderedAt: string
}) {
  const router = useRouter()
  const [pending, startTransition] = useTransition()
  const [removing, setRemoving] = useState<string | null>(null)
  const [withContributions, setWithContributions] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [state, action, adding] = useActionState<PoolFormState, FormData>(addPoolMember, {})
  const run = (call: () => Promise<{ ok: boolean; message?: string }>) =>
    startTransition(async () => {
      const result = await call()
      setError(result.ok ? null : (result.message ?? 'failed'))
      if (result.ok) {
        setRemoving(null)
        router.refresh()
      }
    })
  return (
    <section className="card" aria-labelledby="members-heading">
      <h2 id="members-heading">Members</h2>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
      {members.length === 0 ? (
        <p className="empty" data-testid="members-empty">
          No members: nobody reads this pool yet.
        </p>
      ) : (
        <table className="data" aria-label="Members">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Role</th>
              <th scope="col">Added</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((member) => (
              <tr key={member.agentId} data-testid={`member-${member.agentId}`}>
                <th scope="row">{member.agentId}</th>
                <td>
                  <select
                    aria-label={`Role of ${member.agentId}`}
                    value={member.role}
                    disabled={pending}
                    onChange={(event) =>
                      run(() => setPoolMember(poolId, member.agentId, event.target.value as PoolRole))
                    }
                  >
                    {Object.entries(POOL_ROLE_LABELS).map(([value, label]) => (
                      <option key={value} value={value}>
                        {label}
                      </option>
                    ))}
                  </select>
                </td>
                <td>
                  <TimeAgo date={member.addedAt} renderedAt={renderedAt} />
                </td>
                <td>
                  {removing === member.agentId ? (
                    <ConfirmActions
                      prompt={
                        <label className="inline-field">
                          <input
                            type="checkbox"
                            checked={withContributions}
                            onChange={(event) => setWithContributions(event.target.checked)}
                          />
                          also remove the memories it contributed
                        </label>
                      }
                      confirmLabel={pending ? 'Removing…' : 'Confirm remove'}
                      disabled={pending}
                      onCancel={() => setRemoving(null)}
                      onConfirm={() => run(() => removePoolMember(poolId, member.agentId, withContributions))}
                    />
                  ) : (
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Remove ${member.agentId}`}
                      onClick={() => {
                        setWithContributions(false)
                        setRemoving(member.agentId)
                      }}
                    >
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {outside.length > 0 && (
        <form action={action} className="inline-form" aria-label="Add a member">
          <input type="hidden" name="poolId" value={poolId} />
          <label className="inline-field">
            Agent
            <select name="agentId" aria-label="Agent to add" required defaultValue="">
              <option value="" disabled>
                Choose an agent
              </option>
              {outside.map((agent) => (
                <option key={agent.id} value={agent.id}>
                  {agent.name === agent.id ? agent.id : `${agent.name} (${agent.id})`}
                </option>
              ))}
            </select>
          </label>
          <label className="inline-field">
            Role
            <select name="role" aria-label="Role to give" defaultValue="READER">
              {Object.entries(POOL_ROLE_LABELS).map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={adding}>
            {adding ? 'Adding…' : 'Add member'}
          </button>
          <FieldError state={state} field="agentId" />
          <FormError state={state} />
        </form>
      )}
    </section>
  )
}
