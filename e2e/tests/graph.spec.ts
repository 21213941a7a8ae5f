import type { APIRequestContext, Locator, Page } from '@playwright/test'
import { API_PORT } from '../playwright.config'
import { createAgent, gql, shot, signedInPage } from './api'
import { expect, test } from './fixtures'

// The graph explorer (issue 15) against the real API: a small graph is seeded with the admin key,
// drawn, expanded and filtered in Chromium, and the corrections made in the browser are checked
// through the API (graphRelationship), as an operator's script would see them.
const AGENT = 'graph-agent'
const EMPTY_AGENT = 'graph-empty-agent'
/** An agent whose graph forms from a real memory (through the API's job worker). */
const SOURCE_AGENT = 'graph-source-agent'
/** More neighbours than a neighbourhood answers by default (50), so the API says it cut the hub. */
const HUB_EMPLOYEES = 55
const ALIASES_PER_REQUEST = 20

const GRAPHQL = `http://127.0.0.1:${API_PORT}/graphql`

/** One GraphQL call with an agent's key (as the agent itself would write a memory). */
async function asAgent(request: APIRequestContext, key: string, query: string, variables = {}) {
  const response = await request.post(GRAPHQL, {
    data: { query, variables },
    headers: { authorization: `Bearer ${key}` },
  })
  const body = await response.json()
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined()
  return body.data
}

const RELATIONSHIP_FIELDS =
  'id relation confidence validFrom validUntil learntAt retiredAt retiredReason current'

async function createEntity(request: APIRequestContext, type: string, name: string): Promise<string> {
  const data = await gql(
    request,
    `mutation($input: CreateGraphEntityInput!) { createGraphEntity(input: $input) { __typename ... on GraphEntity { id } ... on Error { message } } }`,
    { input: { agentId: AGENT, type, name } },
  )
  expect(data.createGraphEntity.__typename, data.createGraphEntity.message).toBe('GraphEntity')
  return data.createGraphEntity.id
}

async function createRelationship(
  request: APIRequestContext,
  input: { sourceId: string; relation: string; targetId: string; confidence?: number; validFrom?: string },
): Promise<string> {
  const data = await gql(
    request,
    `mutation($input: CreateGraphRelationshipInput!) { createGraphRelationship(input: $input) { __typename ... on GraphRelationship { id } ... on Error { message } } }`,
    { input: { agentId: AGENT, ...input } },
  )
  expect(data.createGraphRelationship.__typename, data.createGraphRelationship.message).toBe(
    'GraphRelationship',
  )
  return data.createGraphRelationship.id
}

async function relationship(request: APIRequestContext, id: string) {
  const data = await gql(
    request,
    `query($a: ID, $id: ID!) { graphRelationship(agentId: $a, id: $id) { __typename ... on GraphRelationship { ${RELATIONSHIP_FIELDS} } ... on Error { message } } }`,
    { a: AGENT, id },
  )
  expect(data.graphRelationship.__typename, data.graphRelationship.message).toBe('GraphRelationship')
  return data.graphRelationship
}

/**
 * How much of an element's screenshot is drawn on: pixels clearly darker or more coloured than the
 * white background and the light border (any channel under 200), out of all of them.
 */
async function inkOf(page: Page, element: Locator): Promise<{ ink: number; total: number }> {
  const png = await element.screenshot()
  return page.evaluate(async (base64) => {
    const image = new Image()
    image.src = `data:image/png;base64,${base64}`
    await image.decode()
    const canvas = document.createElement('canvas')
    canvas.width = image.width
    canvas.height = image.height
    const context = canvas.getContext('2d')
    if (!context) throw new Error('no 2d context')
    context.drawImage(image, 0, 0)
    const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data
    let ink = 0
    for (let i = 0; i < pixels.length; i += 4)
      if ((pixels[i] ?? 255) < 200 || (pixels[i + 1] ?? 255) < 200 || (pixels[i + 2] ?? 255) < 200) ink++
    return { ink, total: canvas.width * canvas.height }
  }, png.toString('base64'))
}

/**
 * Where on the page cytoscape drew an entity (its centre) or a relationship (its midpoint), by the
 * drawing's id (\`entity:<id>\` or \`relationship:<id>\`, lib/graph.ts), so the test clicks the
 * canvas where a person would. cytoscape keeps its instance on the container (its
 * own registry, \`_cyreg\`): read from there, not from a hook the page would ship for tests.
 */
async function drawnAt(canvas: Locator, elementId: string): Promise<{ x: number; y: number }> {
  const point = await canvas.evaluate((container, id) => {
    type Drawn = {
      isNode(): boolean
      renderedPosition(): { x: number; y: number }
      renderedMidpoint(): { x: number; y: number }
      empty(): boolean
    }
    const { cy } = (container as unknown as { _cyreg: { cy: { getElementById(id: string): Drawn } } })._cyreg
    const element = cy.getElementById(id)
    if (element.empty()) throw new Error(`${id} is not drawn`)
    return element.isNode() ? element.renderedPosition() : element.renderedMidpoint()
  }, elementId)
  const box = await canvas.boundingBox()
  if (!box) throw new Error('the canvas is not on screen')
  return { x: box.x + point.x, y: box.y + point.y }
}

/** What cytoscape holds (read as in drawnAt): the lists beside it could be right while it is not. */
async function drawnCounts(canvas: Locator): Promise<{ nodes: number; edges: number }> {
  return canvas.evaluate((container) => {
    type Count = { length: number }
    const { cy } = (container as unknown as { _cyreg: { cy: { nodes(): Count; edges(): Count } } })._cyreg
    return { nodes: cy.nodes().length, edges: cy.edges().length }
  })
}

test.describe.configure({ mode: 'serial' })

let page: Page
const ids: Record<string, string> = {}
/** An id the seed recorded: a missing one is a broken seed, not an undefined to send. */
function idOf(key: string): string {
  const id = ids[key]
  if (!id) throw new Error(`the seed recorded no id for ${key}`)
  return id
}

test.beforeAll(async ({ browser, request }) => {
  await createAgent(request, AGENT)
  await createAgent(request, EMPTY_AGENT)
  for (const [type, name] of [
    ['PERSON', 'Dana Kim'],
    ['COMPANY', 'Acme'],
    ['PLACE', 'Berlin'],
    ['PLACE', 'Germany'],
    ['PERSON', 'Lena Kim'],
    ['PROJECT', 'Engram'],
    ['COMPANY', 'Hub Corp'],
  ] as const)
    ids[name] = await createEntity(request, type, name)
  ids.worksAt = await createRelationship(request, {
    sourceId: idOf('Dana Kim'),
    relation: 'works at',
    targetId: idOf('Acme'),
    confidence: 0.8,
    validFrom: '2024-01-01T00:00:00.000Z',
  })
  ids.locatedIn = await createRelationship(request, {
    sourceId: idOf('Acme'),
    relation: 'located in',
    targetId: idOf('Berlin'),
    confidence: 0.9,
  })
  // Three hops from Dana: drawn only once Berlin is expanded (the default depth is 2).
  ids.partOf = await createRelationship(request, {
    sourceId: idOf('Berlin'),
    relation: 'part of',
    targetId: idOf('Germany'),
  })
  ids.sister = await createRelationship(request, {
    sourceId: idOf('Lena Kim'),
    relation: 'sister of',
    targetId: idOf('Dana Kim'),
    confidence: 0.6,
  })
  // True only from mid-2025: "as of" 1 January 2025 it is not drawn.
  ids.leads = await createRelationship(request, {
    sourceId: idOf('Dana Kim'),
    relation: 'tech lead on',
    targetId: idOf('Engram'),
    confidence: 0.7,
    validFrom: '2025-06-01T00:00:00.000Z',
  })
  // A dense hub, seeded with aliased fields in a few requests rather than a hundred (the API
  // takes at most 20 aliases a request).
  const people = Array.from({ length: HUB_EMPLOYEES }, (_, i) => `Employee ${i + 1}`)
  for (let start = 0; start < people.length; start += ALIASES_PER_REQUEST) {
    const batch = people.slice(start, start + ALIASES_PER_REQUEST)
    const created = await gql(
      request,
      `mutation { ${batch
        .map(
          (name, i) =>
            `e${i}: createGraphEntity(input: { agentId: "${AGENT}", type: PERSON, name: "${name}" }) { ... on GraphEntity { id } }`,
        )
        .join('\n')} }`,
    )
    await gql(
      request,
      `mutation { ${batch
        .map(
          (_, i) =>
            `r${i}: createGraphRelationship(input: { agentId: "${AGENT}", sourceId: "${created[`e${i}`].id}", relation: "works at", targetId: "${idOf('Hub Corp')}" }) { __typename }`,
        )
        .join('\n')} }`,
    )
  }
  page = await signedInPage(browser)
})

test.afterAll(async () => {
  await page?.close()
})

test('the Graph page is in the navigation and says when an agent has no graph yet', async () => {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Graph' }).click()
  await expect(page.getByRole('heading', { name: 'Graph', level: 1 })).toBeVisible()
  await page.goto(`/graph?agent=${EMPTY_AGENT}`)
  await expect(page.getByTestId('graph-empty')).toContainText('knowledge graph is empty')
})

test('search finds an entity by a loose spelling and draws its neighbourhood on the canvas', async () => {
  await page.goto(`/graph?agent=${AGENT}`)
  await expect(page.getByTestId('graph-start')).toBeVisible()
  const search = page.getByRole('form', { name: 'Search entities' })
  await search.getByLabel('Entity').fill('nothing like it')
  await search.getByRole('button', { name: 'Search' }).click()
  await expect(page.getByTestId('graph-no-match')).toContainText('No entity matches “nothing like it”')

  await search.getByLabel('Entity').fill('dana')
  await search.getByRole('button', { name: 'Search' }).click()
  await page.getByRole('button', { name: 'Draw Dana Kim (Person)' }).click()

  const drawn = page.getByRole('region', { name: 'Entities drawn' })
  for (const name of ['Dana Kim', 'Acme', 'Berlin', 'Lena Kim', 'Engram'])
    await expect(drawn.getByTestId(`graph-node-${name}`)).toBeVisible()
  await expect(drawn.getByTestId('graph-node-Germany')).toHaveCount(0)
  const canvas = page.getByTestId('graph-canvas')
  await expect(canvas).toHaveAttribute('data-drawn', '5')
  await expect(canvas).toHaveAccessibleName(/5 entities and 4 relationships/)
  expect(await drawnCounts(canvas)).toEqual({ nodes: 5, edges: 4 })

  // The canvas really has a drawing: coloured nodes, edges and labels, not a blank white box.
  const { ink, total } = await inkOf(page, canvas)
  expect(ink, `${ink} of ${total} pixels drawn on`).toBeGreaterThan(total * 0.003)
  await shot(page, 'graph-drawn')
})

test('clicking a node on the canvas expands it, and the list expands too', async () => {
  const drawn = page.getByRole('region', { name: 'Entities drawn' })
  const canvas = page.getByTestId('graph-canvas')
  const berlin = await drawnAt(canvas, `entity:${idOf('Berlin')}`)
  await page.mouse.click(berlin.x, berlin.y)
  await expect(drawn.getByTestId('graph-node-Germany')).toContainText('3 hops')
  await expect(canvas).toHaveAttribute('data-drawn', '6')
  expect(await drawnCounts(canvas)).toEqual({ nodes: 6, edges: 5 })
  await expect(drawn.getByTestId('graph-node-Berlin')).toContainText('expanded')

  // The keyboard's way: Engram has no other neighbours, so nothing is added but it is marked.
  await drawn.getByRole('button', { name: 'Expand Engram' }).click()
  await expect(drawn.getByTestId('graph-node-Engram')).toContainText('expanded')
  await expect(canvas).toHaveAttribute('data-drawn', '6')
})

test('clicking an edge on the canvas opens it', async () => {
  const canvas = page.getByTestId('graph-canvas')
  const edge = await drawnAt(canvas, `relationship:${idOf('leads')}`)
  await page.mouse.click(edge.x, edge.y)
  const panel = page.getByRole('region', { name: 'Dana Kim tech lead on Engram' })
  await expect(panel.getByTestId('relationship-validity')).toHaveText('from 2025-06-01 00:00 UTC')
  await expect(panel.getByTestId('relationship-confidence')).toHaveText('0.70')
  await panel.getByRole('button', { name: 'Close' }).click()
  await expect(panel).toHaveCount(0)
})

test('filters by entity type and by time', async () => {
  const drawn = page.getByRole('region', { name: 'Entities drawn' })
  const relationships = page.getByRole('region', { name: 'Relationships drawn' })
  const filters = page.getByRole('form', { name: 'Graph filters' })

  await filters.getByRole('checkbox', { name: 'Person' }).uncheck()
  await expect(drawn.getByTestId('graph-node-Lena Kim')).toHaveCount(0)
  // The first entity drawn stays, whatever its type.
  await expect(drawn.getByTestId('graph-node-Dana Kim')).toBeVisible()
  await expect(relationships.getByRole('button', { name: 'Lena Kim sister of Dana Kim' })).toHaveCount(0)
  await filters.getByRole('checkbox', { name: 'Person' }).check()
  await expect(relationships.getByRole('button', { name: 'Lena Kim sister of Dana Kim' })).toBeVisible()

  const techLead = relationships.getByRole('button', { name: 'Dana Kim tech lead on Engram' })
  await expect(techLead).toBeVisible()
  await filters.getByLabel('As of').fill('2025-01-01')
  await expect(techLead).toHaveCount(0)
  await expect(relationships.getByRole('button', { name: 'Dana Kim works at Acme' })).toBeVisible()
  await expect(page.getByTestId('graph-counts')).toContainText('as of 2025-01-01')
  await shot(page, 'graph-as-of-2025')
  await filters.getByLabel('As of').fill('')
  await expect(techLead).toBeVisible()
})

test('an edge opened from the list shows its relation, confidence and validity, and a correction reaches the API', async ({
  request,
}) => {
  await page
    .getByRole('region', { name: 'Relationships drawn' })
    .getByRole('button', { name: 'Dana Kim works at Acme' })
    .click()
  const panel = page.getByRole('region', { name: 'Dana Kim works at Acme' })
  await expect(panel.getByTestId('relationship-relation')).toHaveText('works at')
  await expect(panel.getByTestId('relationship-confidence')).toHaveText('0.80')
  await expect(panel.getByTestId('relationship-validity')).toHaveText('from 2024-01-01 00:00 UTC')
  await expect(panel.getByTestId('relationship-retired')).toHaveText('no')
  await expect(panel.getByText('none recorded')).toBeVisible()

  const form = panel.getByRole('form', { name: 'Correct relationship' })
  // A refused value is answered beside its field, and nothing is sent.
  await form.getByLabel('Confidence').fill('lots')
  await form.getByRole('button', { name: 'Save correction' }).click()
  await expect(form.getByTestId('error-confidence')).toBeVisible()
  expect((await relationship(request, idOf('worksAt'))).confidence).toBe(0.8)

  await form.getByLabel('Confidence').fill('0.95')
  await form.getByLabel('Valid from (UTC)').fill('2023-05-01T09:00')
  await form.getByRole('button', { name: 'Save correction' }).click()
  await expect(form.getByRole('status')).toHaveText('Corrected.')
  await expect(panel.getByTestId('relationship-confidence')).toHaveText('0.95')
  await expect(panel.getByTestId('relationship-validity')).toHaveText('from 2023-05-01 09:00 UTC')

  // The drawing is read again after the correction.
  await expect(
    page
      .getByRole('region', { name: 'Relationships drawn' })
      .getByRole('listitem')
      .filter({ hasText: 'Dana Kim works at Acme' }),
  ).toContainText('0.95')

  const stored = await relationship(request, idOf('worksAt'))
  expect(stored.confidence).toBe(0.95)
  expect(stored.validFrom).toBe('2023-05-01T09:00:00.000Z')
  expect(stored.retiredAt).toBeNull()
  await shot(page, 'graph-edge-corrected')
})

test('retiring an edge in the browser sets retiredAt in the API and takes it off the drawing', async ({
  request,
}) => {
  const relationships = page.getByRole('region', { name: 'Relationships drawn' })
  await relationships.getByRole('button', { name: 'Lena Kim sister of Dana Kim' }).click()
  const panel = page.getByRole('region', { name: 'Lena Kim sister of Dana Kim' })
  const retire = panel.getByRole('form', { name: 'Retire relationship' })
  await retire.getByLabel('Reason').fill('Lena is a colleague, not a sister')
  await retire.getByRole('button', { name: 'Retire' }).click()
  await retire.getByRole('button', { name: 'Confirm retire' }).click()
  await expect(panel.getByTestId('relationship-retired')).toContainText('Lena is a colleague, not a sister')
  await expect(relationships.getByRole('button', { name: 'Lena Kim sister of Dana Kim' })).toHaveCount(0)

  const stored = await relationship(request, idOf('sister'))
  expect(stored.retiredAt).not.toBeNull()
  expect(stored.retiredReason).toBe('Lena is a colleague, not a sister')
  expect(stored.current).toBe(false)
  await shot(page, 'graph-edge-retired')
})

test('a hub cut by the neighbourhood’s limit is drawn with the API’s truncation message', async () => {
  await page.goto(`/graph?agent=${AGENT}`)
  const search = page.getByRole('form', { name: 'Search entities' })
  await search.getByLabel('Entity').fill('Hub Corp')
  await search.getByRole('button', { name: 'Search' }).click()
  await page.getByRole('button', { name: 'Draw Hub Corp (Company)' }).click()
  await expect(page.getByTestId('graph-truncation')).toBeVisible()
  await expect(page.getByTestId('graph-truncation')).toContainText('Not everything is drawn')
  await shot(page, 'graph-hub-truncated')
})

test('an edge formed from a memory says why: its excerpt, a link to the memory, and "known at" before its retirement', async ({
  request,
}) => {
  await createAgent(request, SOURCE_AGENT)
  const created = await gql(
    request,
    `mutation($a: ID!) { createApiKey(agentId: $a, label: "graph-sources") { ... on CreatedApiKey { key } } }`,
    { a: SOURCE_AGENT },
  )
  const key = created.createApiKey.key as string
  const wrote = await asAgent(
    request,
    key,
    `mutation { createMemory(input: { content: "Dana Kim works at Acme.", category: FACT }) {
      __typename ... on MemoryWrite { outcome memory { id } } ... on Error { message } } }`,
  )
  expect(wrote.createMemory.outcome, wrote.createMemory.message).toBe('STORED')
  const memoryId = wrote.createMemory.memory.id as string

  // The graph forms on the API's job worker: poll, bounded, until the edge is there.
  let edge:
    | { id: string; learntAt: string; target: { name: string }; sources: { memoryId: string | null }[] }
    | undefined
  await expect
    .poll(
      async () => {
        const data = await gql(
          request,
          `query($a: ID) { graphRelationships(agentId: $a, name: "Dana Kim", relation: "works at") {
            ... on GraphRelationshipPage { relationships { id learntAt target { name } sources { memoryId } } } } }`,
          { a: SOURCE_AGENT },
        )
        edge = data.graphRelationships.relationships?.[0]
        return edge ? `works at ${edge.target.name}` : null
      },
      { timeout: 30_000, message: 'graph formation makes "Dana Kim works at Acme"' },
    )
    .toBe('works at Acme')
  const formed = edge as NonNullable<typeof edge>
  expect(formed.sources).toEqual([{ memoryId }])

  await page.goto(`/graph?agent=${SOURCE_AGENT}`)
  await page.getByRole('button', { name: /^Draw Dana Kim/ }).click()
  const relationships = page.getByRole('region', { name: 'Relationships drawn' })
  await relationships.getByRole('button', { name: 'Dana Kim works at Acme' }).click()
  const panel = page.getByRole('region', { name: 'Dana Kim works at Acme' })
  await expect(panel.getByTestId('source-excerpt')).toHaveText('Dana Kim works at Acme.')
  await expect(panel.getByTestId('relationship-source')).toContainText(' UTC')
  await shot(page, 'graph-edge-sources')

  // The link lands on that memory, whatever page of the list it would be on.
  await panel.getByRole('link', { name: `memory #${memoryId}` }).click()
  await expect(page).toHaveURL(new RegExp(`/memories\\?.*id=${memoryId}`))
  await expect(page.getByTestId('memory-by-id')).toBeVisible()
  await expect(page.getByTestId(`memory-${memoryId}`)).toContainText('Dana Kim works at Acme.')

  // Retired after a moment Engram still believed it: "known at" that moment still draws it.
  const believed = new Date(Math.floor(new Date(formed.learntAt).getTime() / 1000) * 1000 + 1000)
  await expect.poll(() => Date.now() > believed.getTime() + 1000).toBe(true)
  const retired = await gql(
    request,
    `mutation($input: RetireGraphRelationshipInput!) { retireGraphRelationship(input: $input) {
      __typename ... on GraphRelationship { retiredAt } ... on Error { message } } }`,
    { input: { agentId: SOURCE_AGENT, id: formed.id, reason: 'checking known at' } },
  )
  expect(retired.retireGraphRelationship.__typename, retired.retireGraphRelationship.message).toBe(
    'GraphRelationship',
  )
  expect(new Date(retired.retireGraphRelationship.retiredAt).getTime()).toBeGreaterThan(believed.getTime())

  await page.goto(`/graph?agent=${SOURCE_AGENT}`)
  await page.getByRole('button', { name: /^Draw Dana Kim/ }).click()
  await expect(page.getByTestId('graph-node-Dana Kim')).toBeVisible()
  const worksAt = relationships.getByRole('button', { name: 'Dana Kim works at Acme' })
  await expect(worksAt).toHaveCount(0)
  const knownAt = believed.toISOString().slice(0, 19)
  await page.getByRole('form', { name: 'Graph filters' }).getByLabel('Known at').fill(knownAt)
  await expect(worksAt).toBeVisible()
  await expect(page.getByTestId('graph-counts')).toContainText(`known at ${knownAt}`)
  await shot(page, 'graph-known-at')
})
