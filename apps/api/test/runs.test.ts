import { createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { listen, type RunningServer } from '../src/server.ts'
import { createAgentKey, createTestApp, publishUntil, type TestApp } from './helpers.ts'

// Trajectory memory through GraphQL (issue 16, spec 004): the run registry, what a run leaves in
// memory, the run context the next run gets, resume/fork/lineage, the list's filters, isolation
// scopes, live events over graphql-ws, and bad input named by field and limit.

const RUN = `id sessionId parentRunId kind isolation scope status goal domain startUrl currentUrl finalUrl
  turnCount success summary result reason durationMs startedAt updatedAt completedAt`
const ERRORS = `... on Error { __typename code message } ... on ValidationError { issues { field message limit } }`
/** The registry's mutations also answer CONFLICT (a run id taken, a run already ended). */
const RUN_ERRORS = `${ERRORS} ... on ConflictError { field }`

const START = `mutation($input: StartRunInput!) { startRun(input: $input) { __typename ... on Run { ${RUN} } ${RUN_ERRORS} } }`
const PROGRESS = `mutation($input: RunProgressInput!) { reportRunProgress(input: $input) { __typename ... on Run { ${RUN} } ${RUN_ERRORS} } }`
const END_FIELDS = `__typename ... on RunEnd { run { ${RUN} } trajectoryId factsRecorded selectorsRecorded sessionRecorded } ${RUN_ERRORS}`
const COMPLETE = `mutation($input: CompleteRunInput!) { completeRun(input: $input) { ${END_FIELDS} } }`
const FAIL = `mutation($input: FailRunInput!) { failRun(input: $input) { ${END_FIELDS} } }`
const RESUME = `mutation($input: ResumeRunInput!) { resumeRun(input: $input) { __typename ... on Run { ${RUN} } ${RUN_ERRORS} } }`
const FORK = `mutation($input: ForkRunInput!) { forkRun(input: $input) { __typename ... on Run { ${RUN} } ${RUN_ERRORS} } }`
const GET_RUN = `query($runId: String!) { run(runId: $runId) { __typename ... on Run { ${RUN} } ${ERRORS} } }`
const LIST = `query($domain: String, $status: RunStatus, $sessionId: String, $parentRunId: String, $scope: String, $limit: Int, $after: String) {
  runs(domain: $domain, status: $status, sessionId: $sessionId, parentRunId: $parentRunId, scope: $scope, limit: $limit, after: $after) {
    __typename ... on RunPage { totalCount nextCursor runs { id status } } ${ERRORS} } }`
const LINEAGE = `query($runId: String!, $limit: Int) { runLineage(runId: $runId, limit: $limit) {
  __typename ... on RunLineage { rootRunId ancestry parentMissing truncated runs { depth run { id kind parentRunId } } } ${ERRORS} } }`
const CONTEXT = `query($runId: String, $domain: String, $goal: String, $scope: String, $budgetTokens: Int, $sections: [RunContextSection!]) {
  runContext(runId: $runId, domain: $domain, goal: $goal, scope: $scope, budgetTokens: $budgetTokens, sections: $sections) {
    __typename ... on RunContext { domain scope goal text totalTokens budgetTokens
      sections { section priority tokens fullTokens items availableItems included truncated text }
      reference { similarity score trajectory { id goal stepCount } } } ${ERRORS} } }`
const MEMORY = `query($domain: String!, $scope: String) {
  trajectories(domain: $domain, scope: $scope) { ... on TrajectoryPage { totalCount trajectories { id goal runId stepCount verifiedCount turns outcome steps { action selector value url verified } } } }
  runSessions(domain: $domain, scope: $scope) { ... on QueryRunSessionsSuccess { data { sessionId runId goal outcome success finalUrl turnsUsed } } }
  appFacts(domain: $domain, scope: $scope) { ... on AppFactPage { totalCount facts { type key value confidence sources } } }
  knownSelectors(domain: $domain, scope: $scope) { ... on KnownSelectorPage { totalCount selectors { element selector successCount failureCount knownGood volatile } } }
}`

const DOMAIN = 'shop.example.com'
const steps = [
  { action: 'navigate', value: `https://${DOMAIN}/`, verified: true },
  { action: 'click', selector: '@e12', url: `https://${DOMAIN}/`, verified: true },
  { action: 'type', selector: 'input[name=q]', value: 'smart watch', verified: true },
  { action: 'press', value: 'Enter', url: `https://${DOMAIN}/`, verified: false },
]

describe('trajectory memory through GraphQL: registry, memory, context, lineage, isolation, live events', () => {
  let t: TestApp
  let server: RunningServer
  let key: string
  let otherKey: string

  beforeAll(async () => {
    t = await createTestApp()
    server = await listen(t.app, 0, '127.0.0.1')
    key = await createAgentKey(t, 'runner')
    otherKey = await createAgentKey(t, 'other-runner')
  })
  afterAll(async () => {
    await server?.close()
    await t?.close()
  })

  const gql = (query: string, variables: Record<string, unknown> = {}, as = key) =>
    t.gql(query, variables, as)
  const start = async (input: Record<string, unknown>, as = key) => {
    const r = await gql(START, { input }, as)
    expect(r.data.startRun.__typename, JSON.stringify(r)).toBe('Run')
    return r.data.startRun
  }

  it('start → progress → complete, watched live over graphql-ws (STARTED, PROGRESS, COMPLETED), remembered', async () => {
    // A run of the agent's started before the subscription: its progress shows when it is live.
    const probe = await start({ goal: 'Probe the subscription', domain: 'probe.example.com' })
    const other = await start({ goal: 'Another agent’s run', domain: DOMAIN }, otherKey)
    const client = createClient({
      url: `ws://127.0.0.1:${server.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${key}` },
      retryAttempts: 0,
    })
    const received: {
      kind: string
      at: string
      run: { id: string; status: string; currentUrl: string | null }
    }[] = []
    const errors: unknown[] = []
    client.subscribe(
      { query: `subscription { runEvents { kind at run { id status currentUrl turnCount } } }` },
      {
        next: (value) => {
          if (value.errors) errors.push(value.errors)
          else received.push(value.data?.runEvents as (typeof received)[number])
        },
        error: (error) => errors.push(error),
        complete: () => {},
      },
    )
    await publishUntil(
      () => received.length > 0,
      () => gql(PROGRESS, { input: { runId: probe.id, turnCount: 1 } }),
    )
    expect(received[0]).toMatchObject({ kind: 'PROGRESS', run: { id: probe.id } })

    const run = await start({
      runId: 'run_shop_1',
      sessionId: 'proj_123',
      goal: 'Search for smart watch reviews',
      startUrl: `https://${DOMAIN}/`,
      model: 'gpt-test',
    })
    expect(run).toMatchObject({
      id: 'run_shop_1',
      sessionId: 'proj_123',
      parentRunId: null,
      kind: 'START',
      isolation: 'SHARED',
      scope: 'default',
      status: 'RUNNING',
      domain: DOMAIN,
      startUrl: `https://${DOMAIN}/`,
      turnCount: 0,
      success: null,
      completedAt: null,
    })
    // The other agent's events never reach this key's subscription.
    await gql(PROGRESS, { input: { runId: other.id, turnCount: 5 } }, otherKey)
    t.clock.advance(20_000)
    const progressed = await gql(PROGRESS, {
      input: {
        runId: run.id,
        currentUrl: `https://${DOMAIN}/search?q=smart+watch`,
        turnCount: 3,
        summary: 'Searching',
      },
    })
    expect(progressed.data.reportRunProgress).toMatchObject({
      currentUrl: `https://${DOMAIN}/search?q=smart+watch`,
      turnCount: 3,
      summary: 'Searching',
    })
    t.clock.advance(25_000)
    const completed = await gql(COMPLETE, {
      input: {
        runId: run.id,
        outcome: 'Found three reviews of smart watches',
        finalUrl: `https://${DOMAIN}/reviews`,
        turnCount: 5,
        steps,
        facts: [
          { type: 'TIMING', key: 'search-load', value: 'results take 5s after submit' },
          { type: 'QUIRK', key: 'shadow-dom', value: 'uses shadow DOM for modals' },
        ],
        selectors: [
          { element: 'input "Search"', selector: 'input[name=q]' },
          { element: 'button "Search"', selector: '@e12' },
        ],
      },
    })
    const end = completed.data.completeRun
    expect(end.__typename, JSON.stringify(completed)).toBe('RunEnd')
    expect(end).toMatchObject({ factsRecorded: 2, selectorsRecorded: 2, sessionRecorded: true })
    expect(end.trajectoryId).toEqual(expect.any(String))
    expect(end.run).toMatchObject({
      status: 'COMPLETED',
      success: true,
      finalUrl: `https://${DOMAIN}/reviews`,
      turnCount: 5,
      // From the start to the end on the test's clock.
      durationMs: 45_000,
    })
    expect(end.run.completedAt).toBe(t.clock.now().toISOString())

    await publishUntil(
      () => received.some((e) => e.run.id === run.id && e.kind === 'COMPLETED'),
      async () => {},
    )
    await client.dispose()
    expect(errors).toEqual([])
    const mine = received.filter((e) => e.run.id === run.id)
    expect(mine.map((e) => e.kind)).toEqual(['STARTED', 'PROGRESS', 'COMPLETED'])
    // Events carry ids; each is answered with the run as it is when delivered.
    expect(mine.at(-1)?.run.status).toBe('COMPLETED')
    expect(received.some((e) => e.run.id === other.id)).toBe(false)

    // What the run left in memory, read back through the API.
    const memory = (await gql(MEMORY, { domain: DOMAIN })).data
    expect(memory.trajectories.totalCount).toBe(1)
    expect(memory.trajectories.trajectories[0]).toMatchObject({
      id: end.trajectoryId,
      goal: 'Search for smart watch reviews',
      runId: run.id,
      stepCount: 4,
      verifiedCount: 3,
      turns: 5,
      outcome: 'Found three reviews of smart watches',
    })
    expect(memory.trajectories.trajectories[0].steps[2]).toEqual({
      action: 'type',
      selector: 'input[name=q]',
      value: 'smart watch',
      url: null,
      verified: true,
    })
    expect(memory.runSessions.data).toEqual([
      {
        sessionId: 'proj_123',
        runId: run.id,
        goal: 'Search for smart watch reviews',
        outcome: 'Found three reviews of smart watches',
        success: true,
        finalUrl: `https://${DOMAIN}/reviews`,
        turnsUsed: 5,
      },
    ])
    expect(memory.appFacts.facts).toEqual(
      expect.arrayContaining([
        {
          type: 'TIMING',
          key: 'search-load',
          value: 'results take 5s after submit',
          confidence: 0.6,
          sources: 1,
        },
      ]),
    )
    const selectors = Object.fromEntries(
      memory.knownSelectors.selectors.map((s: { element: string }) => [s.element, s]),
    )
    expect(selectors['input "Search"']).toMatchObject({ successCount: 1, knownGood: true, volatile: false })
    expect(selectors['button "Search"']).toMatchObject({ selector: '@e12', volatile: true })

    // Ended: no more progress, no second end.
    const late = await gql(PROGRESS, { input: { runId: run.id, turnCount: 9 } })
    expect(late.data.reportRunProgress).toMatchObject({ __typename: 'ConflictError', code: 'CONFLICT' })
    const again = await gql(FAIL, { input: { runId: run.id, reason: 'too late' } })
    expect(again.data.failRun).toMatchObject({ __typename: 'ConflictError', code: 'CONFLICT' })
    const taken = await gql(START, { input: { runId: run.id, goal: 'Again', domain: DOMAIN } })
    expect(taken.data.startRun).toMatchObject({ __typename: 'ConflictError', field: 'runId' })
  })

  it('runContext: the next similar goal gets session history, the reference trajectory, app knowledge and selectors, within its budget', async () => {
    const next = await start({ goal: 'search reviews for a smart watch', domain: `https://${DOMAIN}/deals` })
    expect(next.domain).toBe(DOMAIN)
    const r = await gql(CONTEXT, { runId: next.id })
    const context = r.data.runContext
    expect(context.__typename, JSON.stringify(r)).toBe('RunContext')
    expect(context).toMatchObject({ domain: DOMAIN, scope: 'default', goal: next.goal, budgetTokens: 2000 })
    expect(
      context.sections.map((s: { section: string; priority: number }) => [s.section, s.priority]),
    ).toEqual([
      ['SESSION_HISTORY', 50],
      ['REFERENCE_TRAJECTORY', 40],
      ['APP_KNOWLEDGE', 30],
      ['KNOWN_SELECTORS', 25],
      ['HINTS', 20],
    ])
    expect(context.reference.trajectory).toMatchObject({
      goal: 'Search for smart watch reviews',
      stepCount: 4,
    })
    expect(context.reference.similarity).toBeGreaterThanOrEqual(0.5)
    expect(context.text).toContain('SESSION HISTORY')
    expect(context.text).toContain('Found three reviews of smart watches')
    expect(context.text).toContain('REFERENCE TRAJECTORY')
    expect(context.text).toContain('APP KNOWLEDGE (learned from previous runs):')
    expect(context.text).toContain('results take 5s after submit')
    expect(context.text).toContain('KNOWN SELECTORS (from previous runs):')
    expect(context.text).toContain('input[name=q]')
    expect(context.totalTokens).toBeLessThanOrEqual(2000)
    const full = context.sections.find((s: { section: string }) => s.section === 'SESSION_HISTORY')
    expect(full).toMatchObject({ included: true, truncated: false, items: 1, availableItems: 1 })

    // A dissimilar goal gets no reference; the domain's history and knowledge still come.
    const unrelated = (await gql(CONTEXT, { domain: DOMAIN, goal: 'cancel my subscription' })).data.runContext
    expect(unrelated.reference).toBeNull()
    expect(unrelated.text).toContain('SESSION HISTORY')

    // Trimmed to a small budget, lowest priority first: every section before the cut whole, every
    // one after it dropped.
    const small = (await gql(CONTEXT, { runId: next.id, budgetTokens: 60 })).data.runContext
    expect(small.totalTokens).toBeLessThanOrEqual(60)
    const cut = small.sections.findIndex(
      (s: { included: boolean; truncated: boolean }) => !s.included || s.truncated,
    )
    expect(cut).toBeGreaterThanOrEqual(0)
    for (const section of small.sections.slice(cut + 1)) expect(section.included).toBe(false)
    for (const section of small.sections.slice(0, cut))
      expect(section).toMatchObject({ included: true, truncated: false })
    const only = (await gql(CONTEXT, { runId: next.id, sections: ['APP_KNOWLEDGE'] })).data.runContext
    expect(only.text).toContain('APP KNOWLEDGE')
    expect(only.text).not.toContain('SESSION HISTORY')
    await gql(FAIL, { input: { runId: next.id, reason: 'the page would not load' } })
  })

  it('resume and fork: a new run from the final URL, in the same or a new session; the lineage tree; the runs list’s filters and pages', async () => {
    const resumed = (await gql(RESUME, { input: { runId: 'run_shop_1', goal: 'Now compare their prices' } }))
      .data.resumeRun
    expect(resumed).toMatchObject({
      kind: 'RESUME',
      parentRunId: 'run_shop_1',
      sessionId: 'proj_123',
      domain: DOMAIN,
      startUrl: `https://${DOMAIN}/reviews`,
      goal: 'Now compare their prices',
      status: 'RUNNING',
      scope: 'default',
    })
    const sameGoal = (await gql(RESUME, { input: { runId: 'run_shop_1', newRunId: 'run_shop_1b' } })).data
      .resumeRun
    expect(sameGoal).toMatchObject({ id: 'run_shop_1b', goal: 'Search for smart watch reviews' })
    const forked = (
      await gql(FORK, {
        input: { runId: resumed.id, goal: 'Look for headphones instead', sessionId: 'proj_456' },
      })
    ).data.forkRun
    expect(forked).toMatchObject({ kind: 'FORK', parentRunId: resumed.id, sessionId: 'proj_456' })
    const generated = (await gql(FORK, { input: { runId: 'run_shop_1', goal: 'Build a wishlist' } })).data
      .forkRun
    expect(generated.sessionId).toMatch(/^fork_/)
    expect((await gql(FORK, { input: { runId: 'no_such_run', goal: 'x' } })).data.forkRun.__typename).toBe(
      'NotFoundError',
    )

    const lineage = (await gql(LINEAGE, { runId: forked.id })).data.runLineage
    expect(lineage).toMatchObject({
      rootRunId: 'run_shop_1',
      ancestry: ['run_shop_1', resumed.id, forked.id],
      parentMissing: false,
      truncated: false,
    })
    const depths = Object.fromEntries(
      lineage.runs.map((n: { run: { id: string }; depth: number }) => [n.run.id, n.depth]),
    )
    expect(depths).toEqual({
      run_shop_1: 0,
      [resumed.id]: 1,
      run_shop_1b: 1,
      [generated.id]: 1,
      [forked.id]: 2,
    })
    expect(lineage.runs[0].run.id).toBe('run_shop_1')
    const cut = (await gql(LINEAGE, { runId: forked.id, limit: 2 })).data.runLineage
    expect(cut.runs).toHaveLength(2)
    expect(cut.truncated).toBe(true)

    // Filters: domain (a URL is taken by its host), status, run session, parent, scope.
    const ids = async (variables: Record<string, unknown>) => {
      const r = await gql(LIST, variables)
      expect(r.data.runs.__typename, JSON.stringify(r)).toBe('RunPage')
      return r.data.runs.runs.map((run: { id: string }) => run.id).sort()
    }
    expect(await ids({ domain: `https://${DOMAIN.toUpperCase()}/x`, status: 'RUNNING' })).toEqual(
      [resumed.id, 'run_shop_1b', forked.id, generated.id].sort(),
    )
    expect(await ids({ sessionId: 'proj_123' })).toEqual([resumed.id, 'run_shop_1', 'run_shop_1b'].sort())
    expect(await ids({ parentRunId: 'run_shop_1' })).toEqual([resumed.id, 'run_shop_1b', generated.id].sort())
    expect(await ids({ domain: DOMAIN, status: 'FAILED' })).toHaveLength(1)
    expect(await ids({ domain: 'probe.example.com' })).toHaveLength(1)
    expect(await ids({ scope: 'default', domain: DOMAIN, status: 'COMPLETED' })).toEqual(['run_shop_1'])
    // Pages: most recently updated first, each run once.
    const seen: string[] = []
    let after: string | null = null
    do {
      const page: { runs: { id: string }[]; nextCursor: string | null } = (
        await gql(LIST, { domain: DOMAIN, limit: 2, ...(after ? { after } : {}) })
      ).data.runs
      expect(page.runs.length).toBeLessThanOrEqual(2)
      seen.push(...page.runs.map((r) => r.id))
      after = page.nextCursor
    } while (after)
    expect(seen).toHaveLength(new Set(seen).size)
    expect(seen.sort()).toEqual(await ids({ domain: DOMAIN, limit: 200 }))
  })

  it('isolation: PER_RUN runs start clean and keep to themselves (their resume continues them); OFF records nothing', async () => {
    const perRun = await start({
      goal: 'Search for smart watch reviews',
      domain: DOMAIN,
      isolation: 'PER_RUN',
    })
    expect(perRun).toMatchObject({ isolation: 'PER_RUN', scope: `run:${perRun.id}` })
    const clean = (await gql(CONTEXT, { runId: perRun.id })).data.runContext
    expect(clean).toMatchObject({ scope: `run:${perRun.id}`, reference: null })
    expect(clean.text).not.toContain('Found three reviews')
    const ended = (
      await gql(COMPLETE, {
        input: {
          runId: perRun.id,
          outcome: 'A per-run outcome',
          steps: [{ action: 'click', selector: '#per-run-only' }],
          facts: [{ type: 'QUIRK', key: 'per-run', value: 'a per-run quirk' }],
        },
      })
    ).data.completeRun
    expect(ended).toMatchObject({ factsRecorded: 1, sessionRecorded: true })
    // Not in the shared scope (lists without a scope read every scope)...
    const shared = (await gql(MEMORY, { domain: DOMAIN, scope: 'default' })).data
    expect(JSON.stringify(shared)).not.toMatch(/per-run/i)
    // ...in its own, and a resume of it continues there.
    const own = (await gql(MEMORY, { domain: DOMAIN, scope: `run:${perRun.id}` })).data
    expect(own.trajectories.totalCount).toBe(1)
    const resumed = (await gql(RESUME, { input: { runId: perRun.id } })).data.resumeRun
    expect(resumed).toMatchObject({ isolation: 'PER_RUN', scope: `run:${perRun.id}` })
    const continued = (await gql(CONTEXT, { runId: resumed.id })).data.runContext
    expect(continued.text).toContain('a per-run quirk')
    expect(continued.reference.trajectory.id).toBe(ended.trajectoryId)

    const off = await start({ goal: 'Search for smart watch reviews', domain: DOMAIN, isolation: 'OFF' })
    expect(off).toMatchObject({ isolation: 'OFF', scope: null })
    const empty = (await gql(CONTEXT, { runId: off.id })).data.runContext
    expect(empty).toMatchObject({ scope: null, text: '', totalTokens: 0, reference: null })
    const offEnd = (
      await gql(COMPLETE, {
        input: {
          runId: off.id,
          steps: [{ action: 'click', selector: '#off' }],
          facts: [{ type: 'QUIRK', key: 'off', value: 'an off quirk' }],
          selectors: [{ element: 'button "Off"', selector: '#off' }],
        },
      })
    ).data.completeRun
    expect(offEnd).toMatchObject({
      trajectoryId: null,
      factsRecorded: 0,
      selectorsRecorded: 0,
      sessionRecorded: false,
      run: { status: 'COMPLETED' },
    })
    expect(JSON.stringify((await gql(MEMORY, { domain: DOMAIN })).data)).not.toMatch(/#off|off quirk/)

    // An evaluation's cleanup: the scope's memory goes, the registry keeps its runs.
    const cleared = (
      await gql(
        `mutation($s: String!) { clearRunMemoryScope(scope: $s) { ... on RunDeletion { trajectories facts runSessions runs } } }`,
        { s: `run:${perRun.id}` },
      )
    ).data.clearRunMemoryScope
    expect(cleared).toMatchObject({ trajectories: 1, facts: 1, runs: 0 })
    expect((await gql(GET_RUN, { runId: perRun.id })).data.run.id).toBe(perRun.id)
  })

  it('a dashboard’s live token watches one agent’s runs over graphql-ws, filtered by domain', async () => {
    const issued = await t.gql(
      `mutation { createLiveToken(agentId: "runner") { ... on LiveToken { token } } }`,
    )
    const token = issued.data.createLiveToken.token as string
    const watched = await start({ goal: 'Watched from a dashboard', domain: 'live.example.com' })
    const elsewhere = await start({ goal: 'Another domain', domain: 'elsewhere.example.com' })
    const client = createClient({
      url: `ws://127.0.0.1:${server.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
    })
    const received: { kind: string; run: { id: string; turnCount: number } }[] = []
    client.subscribe(
      // A URL is taken by its host, as everywhere a domain is given.
      {
        query: `subscription { runEvents(domain: "https://LIVE.example.com/board") { kind run { id turnCount } } }`,
      },
      {
        next: (value) => received.push(value.data?.runEvents as (typeof received)[number]),
        error: () => {},
        complete: () => {},
      },
    )
    let turn = 0
    await publishUntil(
      () => received.length > 0,
      async () => {
        turn++
        await gql(PROGRESS, { input: { runId: elsewhere.id, turnCount: turn } })
        await gql(PROGRESS, { input: { runId: watched.id, turnCount: turn } })
      },
    )
    await client.dispose()
    expect(received.length).toBeGreaterThan(0)
    expect(received.every((e) => e.run.id === watched.id && e.kind === 'PROGRESS')).toBe(true)

    // A token for another agent cannot name this one.
    const theirs = await t.gql(
      `mutation { createLiveToken(agentId: "other-runner") { ... on LiveToken { token } } }`,
    )
    const refused = await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${theirs.data.createLiveToken.token}`,
      },
      body: JSON.stringify({ query: `subscription { runEvents(agentId: "runner") { kind } }` }),
    })
    expect(await refused.text()).toContain('"code":"FORBIDDEN"')
  })

  it('bad input: the typed VALIDATION error names the field and the limit', async () => {
    const issues = async (query: string, variables: Record<string, unknown>, field: string) => {
      const r = await gql(query, variables)
      expect(r.errors, JSON.stringify(r)).toBeUndefined()
      const answer = r.data[field]
      expect(answer.__typename, JSON.stringify(r)).toBe('ValidationError')
      return answer.issues.map((i: { field: string; limit: string | null }) => [i.field, i.limit])
    }
    const running = await start({ goal: 'A run to end badly', domain: DOMAIN })
    expect(
      await issues(
        COMPLETE,
        { input: { runId: running.id, steps: Array.from({ length: 501 }, () => ({ action: 'click' })) } },
        'completeRun',
      ),
    ).toEqual([['steps', '500']])
    expect(await issues(START, { input: { goal: '   ', domain: DOMAIN } }, 'startRun')).toEqual([
      ['goal', '1'],
    ])
    expect(await issues(START, { input: { goal: 'x'.repeat(2001), domain: DOMAIN } }, 'startRun')).toEqual([
      ['goal', '2000'],
    ])
    expect((await issues(GET_RUN, { runId: 'has spaces' }, 'run')).map(([f]: string[]) => f)).toEqual([
      'runId',
    ])
    expect(await issues(GET_RUN, { runId: 'r'.repeat(129) }, 'run')).toEqual([['runId', '128']])
    // A domain is needed: given, or the host of startUrl.
    expect(
      (await issues(START, { input: { goal: 'Somewhere' } }, 'startRun')).map(([f]: string[]) => f),
    ).toEqual(['domain'])
    expect(await issues(LIST, { limit: 201 }, 'runs')).toEqual([['limit', '200']])
    expect(await issues(CONTEXT, { domain: DOMAIN, goal: 'x', budgetTokens: 10 }, 'runContext')).toEqual([
      ['budgetTokens', '50'],
    ])
    const tooMany = Array.from({ length: 101 }, (_, i) => ({ type: 'QUIRK', key: `k${i}`, value: 'v' }))
    expect(
      await issues(
        `mutation($input: RecordKnowledgeInput!) { recordKnowledge(input: $input) { __typename ${ERRORS} } }`,
        { input: { domain: DOMAIN, facts: tooMany } },
        'recordKnowledge',
      ),
    ).toEqual([['facts', '100']])
    // Unknown runs are NOT_FOUND; a memory write naming another scope than its run's is refused.
    expect(
      (await gql(PROGRESS, { input: { runId: 'run_nobody', turnCount: 1 } })).data.reportRunProgress,
    ).toMatchObject({ __typename: 'NotFoundError' })
    expect(
      await issues(
        `mutation($input: RecordSelectorInput!) { recordSelector(input: $input) { __typename ${ERRORS} } }`,
        {
          input: {
            domain: DOMAIN,
            runId: running.id,
            scope: 'elsewhere',
            selectors: [{ element: 'a', selector: '#a' }],
          },
        },
        'recordSelector',
      ).then((list) => list.map(([f]: string[]) => f)),
    ).toEqual(['scope'])
  })
})
