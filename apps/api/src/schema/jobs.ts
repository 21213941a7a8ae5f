import { type Job, type JobQueueStats, ValidationError } from '@engram/core'
import { requireAdmin } from '../auth.ts'
import { builder } from '../builder.ts'
import { agentScope } from '../scope.ts'

/** Dead letters listed at most per request. */
export const MAX_FAILED_JOBS_PAGE = 200

const JobQueueStatsRef = builder.objectRef<JobQueueStats>('JobQueueStats').implement({
  description:
    'Depth and lag of one kind of background job (embed: giving new rows their vector). Finished jobs are removed.',
  fields: (t) => ({
    kind: t.exposeString('kind'),
    pending: t.exposeInt('pending', {
      description: 'Queued and not running: due now or waiting for a retry.',
    }),
    running: t.exposeInt('running', { description: 'Held by a worker under a lease.' }),
    failed: t.exposeInt('failed', {
      description: 'Dead letters: out of attempts, kept with their last error until retried.',
    }),
    oldestPendingAgeMs: t.exposeFloat('oldestPendingAgeMs', {
      description:
        'Age of the oldest pending job in milliseconds (0 when none): how far behind the workers are.',
    }),
    oldestDueAgeMs: t.exposeFloat('oldestDueAgeMs', {
      description:
        'How long the longest-waiting due job has been due, in milliseconds (0 when none): the lag of the backlog, without the debounce or retry backoff a job waits for on purpose.',
    }),
  }),
})

const FailedJobRef = builder.objectRef<Job>('FailedJob').implement({
  description: 'A job that used up its attempts.',
  fields: (t) => ({
    id: t.id({ resolve: (job) => String(job.id) }),
    kind: t.exposeString('kind'),
    agentId: t.exposeID('agentId'),
    key: t.exposeString('key', { description: 'What it works on: jobs of one key never run at once.' }),
    attempts: t.exposeInt('attempts'),
    lastError: t.exposeString('lastError', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
})

builder.queryFields((t) => ({
  jobQueueStats: t.field({
    type: [JobQueueStatsRef],
    description:
      'The background job queue per kind: pending, running and dead-lettered jobs, and lag (admin).',
    resolve: (_root, _args, ctx) => {
      requireAdmin(ctx.viewer)
      return ctx.services.jobs.stats()
    },
  }),
  failedJobs: t.field({
    type: [FailedJobRef],
    description: 'Dead-lettered jobs, newest first, of a kind and/or an agent (admin).',
    args: {
      kind: t.arg.string(),
      agentId: t.arg.id(),
      first: t.arg.int({ defaultValue: 50 }),
    },
    resolve: async (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      const first = args.first ?? 50
      if (first < 1 || first > MAX_FAILED_JOBS_PAGE)
        throw new ValidationError([
          { field: 'first', message: `must be 1 to ${MAX_FAILED_JOBS_PAGE}`, limit: MAX_FAILED_JOBS_PAGE },
        ])
      const agentId = args.agentId ? await agentScope(ctx, args.agentId) : null
      return ctx.services.jobs.queue.failed(args.kind ?? null, agentId, first)
    },
  }),
}))

builder.mutationField('retryFailedJobs', (t) =>
  t.field({
    type: builder.objectRef<{ retried: number }>('RetryFailedJobsPayload').implement({
      fields: (f) => ({ retried: f.exposeInt('retried') }),
    }),
    errors: {},
    description:
      'Gives dead-lettered jobs (of a kind and/or an agent) a new set of attempts, due now (admin).',
    args: { kind: t.arg.string(), agentId: t.arg.id() },
    resolve: async (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      const agentId = args.agentId ? await agentScope(ctx, args.agentId) : null
      return { retried: await ctx.services.jobs.queue.retryFailed(args.kind ?? null, agentId) }
    },
  }),
)
