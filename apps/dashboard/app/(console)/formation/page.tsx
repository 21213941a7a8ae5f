import { AgentSelect } from '../../../components/agent-select'
import { type ErrorPayload, gql, listAgents } from '../../../lib/api'
import { FORMATION_SETTINGS_FIELDS, type FormationSettings } from '../../../lib/formation'
import { readActivity } from './actions'
import { ActivityPanel } from './activity-panel'
import { FormationSettingsForm } from './settings-form'

export const dynamic = 'force-dynamic'

export default async function FormationPage({ searchParams }: { searchParams: Promise<{ agent?: string }> }) {
  const { agent } = await searchParams
  const agents = await listAgents()
  const agentId = agent && agents.some((a) => a.id === agent) ? agent : (agents[0]?.id ?? null)
  if (!agentId) return <p className="empty">No agents yet: create one on the API keys page.</p>
  const [activity, settings] = await Promise.all([
    readActivity(agentId),
    gql<{ memoryFormationSettings: ErrorPayload & Partial<FormationSettings> }>(
      `query($a: ID) { memoryFormationSettings(agentId: $a) { __typename ... on MemoryFormationSettings { ${FORMATION_SETTINGS_FIELDS} } ... on Error { message } } }`,
      { a: agentId },
    ),
  ])
  if ('error' in activity) throw new Error(activity.error)
  const formation = settings.memoryFormationSettings
  if (formation.__typename !== 'MemoryFormationSettings')
    throw new Error(formation.message ?? 'memoryFormationSettings failed')
  return (
    <section aria-labelledby="formation-heading">
      <header className="page-header">
        <h1 id="formation-heading">Memory formation</h1>
        <AgentSelect agents={agents} value={agentId} allowAll={false} />
      </header>
      <p className="muted">
        Memories, summaries and the user profile form on their own from every conversation; this is how that
        work is going for the agent, and how it is set.
      </p>
      <ActivityPanel
        key={`activity-${agentId}`}
        agentId={agentId}
        initial={activity}
        renderedAt={new Date().toISOString()}
      />
      <FormationSettingsForm
        key={`settings-${agentId}`}
        agentId={agentId}
        settings={formation as FormationSettings}
      />
    </section>
  )
}
