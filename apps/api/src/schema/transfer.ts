import type { BackupInfo, ExportDocument, ImportReport } from '@engram/engine'
import { requireAdmin } from '../auth.ts'
import { builder } from '../builder.ts'
import { agentScope } from '../scope.ts'

const ExportRef = builder
  .objectRef<{
    document: ExportDocument
    exportedAt: Date
    counts: { memories: number; knowledge: number; sessions: number; messages: number; vectors: number }
  }>('MemoryExport')
  .implement({
    description: "An agent's memories, knowledge, sessions and vectors as one versioned JSON document.",
    fields: (t) => ({
      document: t.field({
        type: 'JSON',
        description: 'format "engram.export", version 1; importMemory takes it back unchanged',
        resolve: (e) => e.document as unknown as Record<string, unknown>,
      }),
      exportedAt: t.expose('exportedAt', { type: 'DateTime' }),
      memories: t.int({ resolve: (e) => e.counts.memories }),
      knowledge: t.int({ resolve: (e) => e.counts.knowledge }),
      sessions: t.int({ resolve: (e) => e.counts.sessions }),
      messages: t.int({ resolve: (e) => e.counts.messages }),
      vectors: t.int({ resolve: (e) => e.counts.vectors }),
    }),
  })

const ImportModeEnum = builder.enumType('ImportMode', {
  values: {
    REPLACE: { description: "Clears the agent's memory first, then imports (restore)" },
    MERGE: { description: 'Adds to what the agent has; a conversation it already has is refused' },
  } as const,
})

const ImportReportRef = builder.objectRef<ImportReport>('ImportReport').implement({
  fields: (t) => ({
    memories: t.exposeInt('memories'),
    knowledge: t.exposeInt('knowledge'),
    sessions: t.exposeInt('sessions'),
    messages: t.exposeInt('messages'),
    vectors: t.exposeInt('vectors', { description: 'Vectors taken from the document (0 when re-embedded)' }),
    reembedded: t.exposeBoolean('reembedded', {
      description: "The document's embedding model differs from the server's: everything was embedded again",
    }),
  }),
})

const BackupRef = builder.objectRef<BackupInfo>('Backup').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    bytes: t.exposeInt('bytes'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
})

const ClearedRef = builder
  .objectRef<{ memories: number; knowledge: number; sessions: number }>('ClearAllPayload')
  .implement({
    fields: (t) => ({
      memories: t.exposeInt('memories'),
      knowledge: t.exposeInt('knowledge'),
      sessions: t.exposeInt('sessions'),
    }),
  })

builder.queryFields((t) => ({
  exportMemory: t.field({
    type: ExportRef,
    errors: {},
    description: "Exports an agent's memory as a versioned JSON document.",
    args: {
      agentId: t.arg.id(),
      includeSnapshots: t.arg.boolean({
        defaultValue: false,
        description: "Also export the optimizer's run history (snapshots).",
      }),
    },
    resolve: async (_root, args, ctx) => {
      const document = await ctx.services.transfer.exportAgent(await agentScope(ctx, args.agentId), {
        includeSnapshots: args.includeSnapshots ?? false,
      })
      return {
        document,
        exportedAt: ctx.services.clock.now(),
        counts: {
          memories: document.memories.length,
          knowledge: document.knowledge.length,
          sessions: document.sessions.length,
          messages: document.sessions.reduce((n, s) => n + s.messages.length, 0),
          vectors: document.vectors.length,
        },
      }
    },
  }),
  backups: t.field({
    type: [BackupRef],
    errors: {},
    description: 'Whole-database backups in the backup folder, newest first (admin).',
    resolve: (_root, _args, ctx) => {
      requireAdmin(ctx.viewer)
      return ctx.services.transfer.listBackups()
    },
  }),
}))

builder.mutationFields((t) => ({
  importMemory: t.field({
    type: ImportReportRef,
    errors: {},
    description:
      "Imports an exported document into an agent, in one transaction: all of it or nothing. REPLACE also takes the document's settings, optimizer parameters and (admin keys only) privacy policy; MERGE adds memory and keeps the agent's own.",
    args: {
      agentId: t.arg.id(),
      document: t.arg({ type: 'JSON', required: true }),
      mode: t.arg({ type: ImportModeEnum, defaultValue: 'REPLACE' }),
    },
    resolve: async (_root, args, ctx) =>
      ctx.services.transfer.importAgent(
        await agentScope(ctx, args.agentId),
        args.document,
        args.mode ?? 'REPLACE',
        { admin: ctx.viewer.kind === 'admin' },
      ),
  }),
  backupDatabase: t.field({
    type: BackupRef,
    errors: {},
    description: 'A consistent copy of the whole database, taken while it serves (admin).',
    resolve: (_root, _args, ctx) => {
      requireAdmin(ctx.viewer)
      return ctx.services.transfer.backup()
    },
  }),
  restoreDatabase: t.field({
    type: builder.objectRef<{ name: string; tables: number }>('RestorePayload').implement({
      fields: (f) => ({ name: f.exposeString('name'), tables: f.exposeInt('tables') }),
    }),
    errors: {},
    description: 'Replaces all data with a backup, in one transaction; API keys are kept (admin).',
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      return ctx.services.transfer.restore(args.name)
    },
  }),
  clearAll: t.field({
    type: ClearedRef,
    errors: {},
    description:
      'Deletes an agent\'s memories, knowledge, sessions and vectors (admin). confirm must be "CLEAR <agentId>", or "CLEAR ALL AGENTS" without agentId.',
    args: { agentId: t.arg.id(), confirm: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      const agentId = args.agentId ? await agentScope(ctx, args.agentId) : null
      return ctx.services.transfer.clearAll(agentId, args.confirm)
    },
  }),
}))
