// A synthetic workload in the shape of spec 004's (WebBench-style repeated domains): several
// domains, each with a set of tasks an agent is asked again and again, some in other words
// (paraphrases), some never seen (unrelated), some runs failing. Tasks on one domain share words
// on purpose ("search for smart watch reviews" / "search for running shoes reviews"), so a
// reference for the wrong task is possible and precision means something.

export interface Task {
  id: string
  domain: string
  goal: string
  /** The selectors its steps use, in order. */
  selectors: string[]
}

export interface DomainSpec {
  domain: string
  /** "https://host" for web domains, null for a place without URLs (a repository). */
  origin: string | null
  tasks: Task[]
  /** Goals no run of the workload records: they must get no reference. */
  unrelated: string[]
  /** Facts the domain's runs keep observing (key → value); one value is sometimes contradicted. */
  facts: { type: 'TIMING' | 'SELECTOR' | 'PATTERN' | 'QUIRK'; key: string; value: string; other: string }[]
}

const expand = (domain: string, verbs: string[], objects: string[], prefix: string) =>
  verbs.flatMap((verb, v) =>
    objects.map((object, o) => ({
      id: `${domain}#${v}.${o}`,
      domain,
      goal: verb.replace('{x}', object),
      selectors: [
        `[data-testid='${prefix}-nav-${v}']`,
        `@e${10 + o}`,
        `[aria-label='${object}']`,
        `#${prefix}-action-${v}`,
        `button "Confirm ${v}"`,
      ].slice(0, 3 + ((v + o) % 3)),
    })),
  )

/** Four domains of twelve tasks each: a shop, docs, a local app and a repository (no URL). */
export function workloadDomains(): DomainSpec[] {
  return [
    {
      domain: 'shop.example.com',
      origin: 'https://shop.example.com',
      tasks: expand(
        'shop.example.com',
        [
          'search for {x} reviews',
          'add the {x} to the cart',
          'compare prices of {x}',
          'track the order for {x}',
        ],
        ['smart watch', 'running shoes', 'coffee grinder'],
        'shop',
      ),
      unrelated: [
        'read the privacy policy',
        'change the display language to german',
        'log out of every device',
      ],
      facts: [
        { type: 'TIMING', key: 'search', value: 'results load in about 2s', other: 'results load instantly' },
        {
          type: 'QUIRK',
          key: 'cookie-banner',
          value: 'a cookie banner covers the search box',
          other: 'no banner',
        },
      ],
    },
    {
      domain: 'docs.example.org',
      origin: 'https://docs.example.org',
      tasks: expand(
        'docs.example.org',
        ['find the page about {x}', 'open the api reference for {x}', 'copy the code example for {x}'],
        ['authentication', 'rate limits', 'webhooks', 'pagination'],
        'docs',
      ),
      unrelated: ['subscribe to the newsletter', 'report a typo on the home page', 'switch to dark mode'],
      facts: [{ type: 'PATTERN', key: 'nav', value: 'sidebar → section → anchor', other: 'search first' }],
    },
    {
      domain: 'localhost:5173',
      origin: 'http://localhost:5173',
      tasks: expand(
        'localhost:5173',
        [
          'create a new {x}',
          'delete the {x} named test',
          'rename the {x} to final',
          'share the {x} with the team',
        ],
        ['project', 'task list', 'user account'],
        'app',
      ),
      unrelated: ['upgrade the billing plan', 'export all data as a zip file', 'enable two factor login'],
      facts: [{ type: 'SELECTOR', key: 'save', value: "[data-testid='save']", other: 'button "Save"' }],
    },
    {
      domain: 'acme/api',
      origin: null,
      tasks: expand(
        'acme/api',
        ['run the unit tests for {x}', 'fix the lint errors in {x}', 'update the changelog for {x}'],
        ['billing', 'search', 'auth', 'webhooks'],
        'repo',
      ),
      unrelated: ['bump the node version in ci', 'write a release announcement', 'archive stale branches'],
      facts: [{ type: 'TIMING', key: 'tests', value: 'the suite takes 40s', other: 'the suite takes 2m' }],
    },
  ]
}

const SYNONYMS: Record<string, string> = {
  search: 'look',
  add: 'put',
  compare: 'check',
  track: 'follow',
  find: 'locate',
  open: 'show',
  copy: 'grab',
  create: 'make',
  delete: 'remove',
  rename: 'retitle',
  share: 'send',
  run: 'execute',
  fix: 'repair',
  update: 'edit',
  reviews: 'opinions',
  prices: 'costs',
  cart: 'basket',
  page: 'article',
  reference: 'docs',
  example: 'sample',
  team: 'group',
  errors: 'warnings',
}
const FILLERS = ['please', 'quickly', 'now', 'again', 'for me', 'right away']
const STOP = new Set(['the', 'for', 'to', 'of', 'a', 'in', 'about', 'with'])

export type Phrasing = 'repeat' | 'light paraphrase' | 'heavy paraphrase'

/**
 * The goal in other words. A light paraphrase adds a filler or swaps one word for a synonym (what
 * an orchestrator re-asking usually does); a heavy one swaps two words, drops a function word and
 * adds fillers (word overlap is not meant to catch it: it measures where Jaccard stops).
 */
export function paraphrase(goal: string, phrasing: Phrasing, random: () => number): string {
  if (phrasing === 'repeat') return goal
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T
  let words = goal.split(' ')
  const swappable = () => words.map((w, i) => (SYNONYMS[w] ? i : -1)).filter((i) => i >= 0)
  const swap = () => {
    const options = swappable()
    if (options.length === 0) return
    const i = pick(options)
    words[i] = SYNONYMS[words[i] as string] as string
  }
  if (phrasing === 'light paraphrase') {
    if (random() < 0.5) words = [pick(FILLERS), ...words]
    else swap()
    return words.join(' ')
  }
  swap()
  swap()
  const stop = words.findIndex((w) => STOP.has(w))
  if (stop >= 0) words.splice(stop, 1)
  return [pick(FILLERS), ...words, pick(FILLERS)].join(' ')
}

/** One run of the replay. */
export interface WorkloadRun {
  domain: DomainSpec
  /** Null for an unrelated goal. */
  task: Task | null
  goal: string
  phrasing: Phrasing | 'unrelated'
  fails: boolean
}

/** `count` runs over the domains: 10% unrelated, the rest a task (60% as asked, 25% light, 15% heavy paraphrase), 15% failing. */
export function workloadRuns(domains: DomainSpec[], count: number, random: () => number): WorkloadRun[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T
  return Array.from({ length: count }, () => {
    const domain = pick(domains)
    const fails = random() < 0.15
    if (random() < 0.1)
      return { domain, task: null, goal: pick(domain.unrelated), phrasing: 'unrelated', fails }
    const task = pick(domain.tasks)
    const roll = random()
    const phrasing: Phrasing = roll < 0.6 ? 'repeat' : roll < 0.85 ? 'light paraphrase' : 'heavy paraphrase'
    return { domain, task, goal: paraphrase(task.goal, phrasing, random), phrasing, fails }
  })
}

/** The steps a successful run of the task records (a navigate first on web domains). */
export function taskSteps(task: Task, origin: string | null, random: () => number) {
  const url = origin ? `${origin}/` : null
  const steps = task.selectors.map((selector, i) => ({
    action: i === 1 ? 'type' : 'click',
    selector,
    value: i === 1 ? task.goal.split(' ').slice(-2).join(' ') : null,
    url,
    verified: random() < 0.85,
    durationMs: 400 + Math.floor(random() * 1_600),
    extra: null,
  }))
  return origin
    ? [
        { ...(steps[0] as (typeof steps)[number]), action: 'navigate', selector: null, value: origin },
        ...steps,
      ]
    : steps
}

const CORPUS_VERBS = [
  'search for {x} reviews',
  'add the {x} to the cart',
  'compare prices of {x}',
  'track the order for {x}',
  'return the {x}',
  'rate the {x}',
]
const CORPUS_PRODUCTS = Array.from(
  { length: 100 },
  (_, i) => `product${i} ${['lamp', 'desk', 'chair', 'kettle', 'phone'][i % 5]}`,
)

/** Goals for the 10K-per-domain latency corpus: 600 tasks (verbs × products), each asked many times. */
export function corpusGoal(random: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)] as T
  return pick(CORPUS_VERBS).replace('{x}', pick(CORPUS_PRODUCTS))
}
