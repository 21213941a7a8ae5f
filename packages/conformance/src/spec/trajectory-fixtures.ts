import { DEFAULT_TRAJECTORY_RULES, goalWords } from '@engram/core'
import type { NewRun, NewTrajectory, Storage, TrajectoryMemoryRepository } from '@engram/engine'

// The records trajectory memory's conformance spec writes (trajectories.ts).

export const T0 = new Date('2026-03-01T00:00:00.000Z')
export const later = (minutes: number) => new Date(T0.getTime() + minutes * 60_000)
export const RULES = DEFAULT_TRAJECTORY_RULES
export const KEEP_ALL = 1_000

export const run = (id: string, extra: Partial<NewRun> = {}): NewRun => ({
  id,
  sessionId: 'session-1',
  parentRunId: null,
  kind: 'START',
  isolation: 'SHARED',
  scope: 'default',
  status: 'RUNNING',
  goal: 'search for shoes',
  domain: 'shop.example',
  startUrl: 'https://shop.example/',
  currentUrl: null,
  finalUrl: null,
  turnCount: 0,
  success: null,
  summary: null,
  result: null,
  reason: null,
  artifactPaths: [],
  model: null,
  durationMs: null,
  extra: null,
  startedAt: T0,
  updatedAt: T0,
  completedAt: null,
  ...extra,
})

export const trajectory = (id: string, goal: string, extra: Partial<NewTrajectory> = {}): NewTrajectory => ({
  id,
  scope: 'default',
  domain: 'shop.example',
  origin: 'https://shop.example',
  goal,
  words: goalWords(goal),
  runId: null,
  steps: [
    {
      action: 'click',
      selector: 'button "Search"',
      value: null,
      url: 'https://shop.example/',
      verified: true,
      durationMs: 120,
      extra: null,
    },
    {
      action: 'type',
      selector: '#q',
      value: 'shoes',
      url: null,
      verified: null,
      durationMs: null,
      extra: { k: 1 },
    },
  ],
  stepCount: 2,
  verifiedCount: 1,
  success: true,
  turns: 3,
  durationMs: 9_000,
  outcome: 'found',
  model: 'model-x',
  recordedAt: T0,
  extra: null,
  ...extra,
})

export const session = (runId: string | null, endedAt: Date, extra: Record<string, unknown> = {}) => ({
  scope: 'default',
  domain: 'shop.example',
  sessionId: 'session-1',
  runId,
  goal: 'search for shoes',
  outcome: 'done',
  success: true,
  finalUrl: null,
  turnsUsed: 4,
  durationMs: 1_000,
  endedAt,
  extra: null,
  ...extra,
})

export const fact = (value: string, key = 'search box') => ({
  scope: 'default',
  domain: 'shop.example',
  type: 'SELECTOR' as const,
  key,
  value,
})

export const selector = (sel: string, outcome: 'SUCCESS' | 'FAILURE', element = 'button "Search"') => ({
  scope: 'default',
  domain: 'shop.example',
  element,
  selector: sel,
  outcome,
})

export const WINDOW = { offset: 0, limit: 100 }
export const ids = (rows: { id: string }[]) => rows.map((r) => r.id)

export async function twoAgents(storage: Storage): Promise<TrajectoryMemoryRepository> {
  await storage.repositories.agents.upsert('agent-a', null)
  await storage.repositories.agents.upsert('agent-b', null)
  return storage.trajectories
}
