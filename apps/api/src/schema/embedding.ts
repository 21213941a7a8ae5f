import { ForbiddenError } from '@engram/core'
import { filter, pipe } from 'graphql-yoga'
import { requireAdmin } from '../auth.ts'
import { builder } from '../builder.ts'
import type { EmbeddingProgressEvent } from '../pubsub.ts'
import { guardSubscription, resolveGuarded } from '../subscription-access.ts'

const EmbeddingStateEnum = builder.enumType('EmbeddingJobState', {
  values: {
    IDLE: { value: 'idle' },
    RUNNING: { value: 'running' },
    DONE: { value: 'done' },
    FAILED: { value: 'failed' },
  } as const,
})

const EmbeddingProgressRef = builder.objectRef<EmbeddingProgressEvent>('EmbeddingProgress').implement({
  description: 'Re-embedding with the current model: how far it has come.',
  fields: (t) => ({
    model: t.exposeString('model'),
    state: t.field({ type: EmbeddingStateEnum, resolve: (p) => p.state }),
    total: t.exposeInt('total'),
    done: t.exposeInt('done'),
    failed: t.exposeInt('failed'),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    error: t.exposeString('error', { nullable: true }),
  }),
})

builder.queryField('embeddingStatus', (t) =>
  t.field({
    type: EmbeddingProgressRef,
    description: 'The embedding model in use and the state of the latest re-embedding.',
    resolve: (_root, _args, ctx) => {
      // Its counts span every agent: for operators, like embeddingProgress (agents have memoryStats).
      requireAdmin(ctx.viewer)
      return ctx.services.embeddings.progress
    },
  }),
)

builder.mutationField('reembed', (t) =>
  t.field({
    type: EmbeddingProgressRef,
    errors: {},
    description:
      'Embeds, in the background, everything that has no vector of the current model (admin). Progress on embeddingProgress.',
    resolve: (_root, _args, ctx) => {
      requireAdmin(ctx.viewer)
      return ctx.services.embeddings.reembed()
    },
  }),
)

builder.subscriptionField('embeddingProgress', (t) =>
  t.field({
    type: EmbeddingProgressRef,
    description: 'Re-embedding progress as it happens (admin keys and live tokens).',
    subscribe: (_root, _args, ctx) => {
      if (ctx.viewer.kind === 'agent') throw new ForbiddenError('embedding progress is for operators')
      if (ctx.viewer.kind !== 'live') requireAdmin(ctx.viewer)
      return guardSubscription(
        ctx,
        pipe(
          ctx.services.pubsub.subscribe('embedding:progress'),
          filter(() => true),
        ),
        null,
      )
    },
    resolve: (event) => resolveGuarded(event),
  }),
)
