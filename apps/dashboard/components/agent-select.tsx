'use client'

import { usePathname, useRouter, useSearchParams } from 'next/navigation'

/** Picks the agent a page shows; "all" is offered where a page can aggregate. */
export function AgentSelect({
  agents,
  value,
  allowAll = true,
}: {
  agents: { id: string; name: string }[]
  value: string | null
  allowAll?: boolean
}) {
  const router = useRouter()
  const pathname = usePathname()
  const params = useSearchParams()
  return (
    <label className="inline-field">
      Agent
      {/* Named outright: the label around it also holds the options' text. */}
      <select
        aria-label="Agent"
        value={value ?? ''}
        onChange={(event) => {
          const next = new URLSearchParams(params)
          if (event.target.value) next.set('agent', event.target.value)
          else next.delete('agent')
          next.delete('page')
          router.push(`${pathname}?${next.toString()}`)
        }}
      >
        {allowAll && <option value="">All agents</option>}
        {agents.map((agent) => (
          <option key={agent.id} value={agent.id}>
            {agent.name === agent.id ? agent.id : `${agent.name} (${agent.id})`}
          </option>
        ))}
      </select>
    </label>
  )
}
