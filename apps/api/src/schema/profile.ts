// The generated user profile (issue 13 §4): current version, versions, diff and "regenerate now",
// answered through the operations layer like the SDK's.
import type { OutputOf } from '@engram/contract'
import { builder } from '../builder.ts'
import { operate } from '../operations.ts'
import { FormationWriterEnum } from './summaries.ts'

const ProfileTriggerEnum = builder.enumType('ProfileTrigger', {
  description:
    'Why a profile version was built: enough new CONTRIBUTIONS, changed OVERRIDES (pinned memories), a MEMORY_DELETED it was built from, or a REQUEST.',
  values: ['CONTRIBUTIONS', 'OVERRIDES', 'MEMORY_DELETED', 'REQUEST'] as const,
})

const ProfileVersionRef = builder.objectRef<OutputOf<'regenerateProfile'>>('ProfileVersion').implement({
  description: 'One version of the generated profile of an agent’s user; every version is kept.',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    userId: t.exposeString('userId', {
      nullable: true,
      description: 'Null: the profile of the agent’s memories that name no user.',
    }),
    version: t.exposeInt('version', { description: '1, 2, 3… per agent and user.' }),
    content: t.exposeString('content'),
    tokenCount: t.exposeInt('tokenCount'),
    writer: t.field({ type: FormationWriterEnum, resolve: (v) => v.writer }),
    trigger: t.field({ type: ProfileTriggerEnum, resolve: (v) => v.trigger }),
    sourceMemoryIds: t.exposeStringList('sourceMemoryIds', {
      description: 'The memories it was built from.',
    }),
    overrideIds: t.exposeStringList('overrideIds', {
      description: 'The pinned memories (user overrides) it shows first and whole.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
})

const UserProfileRef = builder.objectRef<OutputOf<'userProfile'>>('UserProfile').implement({
  fields: (t) => ({
    current: t.field({
      type: ProfileVersionRef,
      nullable: true,
      description: 'The newest version; null until a profile was generated for the user.',
      resolve: (p) => p.current,
    }),
  }),
})

const ProfileVersionPageRef = builder.objectRef<OutputOf<'profileVersions'>>('ProfileVersionPage').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount'),
    versions: t.field({
      type: [ProfileVersionRef],
      description: 'Newest first.',
      resolve: (p) => p.versions,
    }),
  }),
})

const ProfileDiffRef = builder.objectRef<OutputOf<'profileDiff'>>('ProfileDiff').implement({
  description: 'What changed between two versions of a profile, line by line (headings are not lines).',
  fields: (t) => ({
    from: t.exposeInt('from'),
    to: t.exposeInt('to'),
    added: t.exposeStringList('added', { description: 'Lines of `to` that `from` did not have.' }),
    removed: t.exposeStringList('removed', { description: 'Lines of `from` that `to` no longer has.' }),
    unchanged: t.exposeInt('unchanged', { description: 'Lines both have.' }),
  }),
})

builder.queryFields((t) => ({
  userProfile: t.field({
    type: UserProfileRef,
    errors: {},
    description:
      'The generated profile of the agent’s user (without userId: of the memories that name no user), its current version or null.',
    args: { agentId: t.arg.id(), userId: t.arg.string() },
    resolve: (_root, args, ctx) => operate(ctx, 'userProfile', args),
  }),
  profileVersions: t.field({
    type: ProfileVersionPageRef,
    errors: {},
    description:
      'Every version of a user’s profile, newest first: skip `offset`, at most `limit` (1-100, 20 when not given).',
    args: { agentId: t.arg.id(), userId: t.arg.string(), offset: t.arg.int(), limit: t.arg.int() },
    resolve: (_root, args, ctx) => operate(ctx, 'profileVersions', args),
  }),
  profileDiff: t.field({
    type: ProfileDiffRef,
    errors: {},
    description: 'What changed from version `from` to version `to` of a user’s profile.',
    args: {
      agentId: t.arg.id(),
      userId: t.arg.string(),
      from: t.arg.int({ required: true }),
      to: t.arg.int({ required: true }),
    },
    resolve: (_root, args, ctx) => operate(ctx, 'profileDiff', args),
  }),
}))

builder.mutationFields((t) => ({
  regenerateProfile: t.field({
    type: ProfileVersionRef,
    errors: {},
    description:
      'Builds a new version of the user’s profile now from the current memories (earlier versions are kept).',
    args: { agentId: t.arg.id(), userId: t.arg.string() },
    resolve: (_root, args, ctx) => operate(ctx, 'regenerateProfile', args),
  }),
}))
