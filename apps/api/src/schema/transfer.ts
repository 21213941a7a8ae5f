import type { OutputOf } from '@engram/contract'
import { requireAdmin } from '../auth.ts'
import { builder } from '../builder.ts'
import { operate } from '../operations.ts'
import { agentScope } from '../scope.ts'

const ExportRef = builder.objectRef<OutputOf<'exportMemory'>>('MemoryExport').implement({
  description: "An agent's memories, knowledge, sessions and vectors as one versioned JSON document.",
  fields: (t) => ({
    document: t.field({
      type: 'JSON',
      description: 'format "engram.export", version 1; importMemory takes it back unchanged',
      resolve: (e) => e.document,
    }),
    exportedAt: t.expose('exportedAt', { type: 'DateTime' }),
    memories: t.exposeInt('memories'),
    knowledge: t.exposeInt('knowledge'),
    sessions: t.exposeInt('sessions'),
    messages: t.exposeInt('messages'),
    vectors: t.exposeInt('vectors'),
  }),
})

const ImportModeEnum = builder.enumType('ImportMode', {
  values: {
    REPLACE: { description: "Clears the agent's memory first, then imports (restore)" },
    MERGE: { description: 'Adds to what the agent has; a conversation it already has is refused' },
  } as const,
})

const ImportReportRef = builder.objectRef<OutputOf<'importMemory'>>('ImportReport').implement({
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

const BackupRef = builder.objectRef<OutputOf<'backupDatabase'>>('Backup').implement({
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
    resolve: (_root, args, ctx) => operate(ctx, 'exportMemory', args),
  }),
  backups: t.field({
    type: [BackupRef],
    errors: {},
    description: 'Whole-database backups in the backup folder, newest first (admin).',
    resolve: (_root, _args, ctx) => operate(ctx, 'backups'),
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
    resolve: (_root, args, ctx) => operate(ctx, 'importMemory', args),
  }),
  backupDatabase: t.field({
    type: BackupRef,
    errors: {},
    description: 'A consistent copy of the whole database, taken while it serves (admin).',
    resolve: (_root, _args, ctx) => operate(ctx, 'backupDatabase'),
  }),
  restoreDatabase: t.field({
    type: builder.objectRef<{ name: string; tables: number }>('RestorePayload').implement({
      fields: (f) => ({ name: f.exposeString('name'), tables: f.exposeInt('tables') }),
    }),
    errors: {},
    description: 'Replaces all data with a backup, in one transaction; API keys are kept (admin).',
    args: { name: t.arg.string({ required: true }) },
    // The service's own check of the name (it names the name refused), not the catalog's pattern.
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
