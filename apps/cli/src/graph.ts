import type { EngramClient, OutputOf, Result } from '@engram/contract'
import { type Command, InvalidArgumentError, Option } from 'commander'
import { CliError } from './errors.ts'

/** Runs one call and prints its data (JSON with --json, else the human form); see main.ts. */
export type RunCall = <T>(
  call: (engram: EngramClient) => Promise<Result<T>>,
  human: (data: T) => string,
) => Promise<T>

type Entity = OutputOf<'graphEntity'>
type Relationship = OutputOf<'graphRelationship'>

const ENTITY_TYPES = ['person', 'company', 'place', 'project', 'tool', 'concept', 'event'] as const
type EntityTypeName = Uppercase<(typeof ENTITY_TYPES)[number]>

function whole(value: string): number {
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('must be a whole number')
  return parsed
}
function fraction(value: string): number {
  const parsed = Number(value)
  if (!Number.isFinite(parsed)) throw new InvalidArgumentError('must be a number from 0 to 1')
  return parsed
}
const repeatable = (value: string, previous: string[] = []) => [...previous, value]
const typeOption = (flags: string, what: string) => new Option(flags, what).choices(ENTITY_TYPES)
const upperType = (type: string | undefined) => type?.toUpperCase() as EntityTypeName | undefined

export function entityLine(e: Entity): string {
  const aliases = e.aliases.length ? ` (also ${e.aliases.join(', ')})` : ''
  return `${e.id}\t${e.type.toLowerCase()}\t${e.name}${aliases}`
}

/** "Dana —works at→ Acme  0.90  2024-01-01… → …  ended": who, what, whom, how sure, when. */
export function relationshipLine(r: Relationship): string {
  const span = `${r.validFrom?.slice(0, 10) ?? '…'} → ${r.validUntil?.slice(0, 10) ?? '…'}`
  const state = r.current
    ? ''
    : r.retiredAt
      ? `\tretired${r.retiredReason ? `: ${r.retiredReason}` : ''}`
      : '\tnot current'
  return `${r.id}\t${r.source.name} —${r.relation}→ ${r.target.name}\t${r.confidence.toFixed(2)}\t${span}${state}`
}

/**
 * `engram graph ...`: the knowledge graph of issue 15. Reads answer for an agent key (or the admin
 * key with --agent); the corrections (add, update, merge, link, retire, delete) need the admin key.
 */
export function addGraphCommands(program: Command, run: RunCall): void {
  const graph = program
    .command('graph')
    .description("the agent's knowledge graph: entities and relationships")
  const agentOption = () => new Option('--agent <id>', 'the agent (with the admin key)')

  graph
    .command('search [name]')
    .description('entities by name (fuzzy), best match first; without a name, the most mentioned')
    .addOption(agentOption())
    .addOption(typeOption('--type <type>', 'only entities of this type'))
    .option('--limit <n>', 'at most this many (1-500)', whole)
    .action(async (name: string | undefined, o: { agent?: string; type?: string; limit?: number }) => {
      await run(
        (engram) => engram.graphEntities({ agentId: o.agent, name, type: upperType(o.type), limit: o.limit }),
        (page) =>
          page.matches.map((m) => `${entityLine(m.entity)}\t${m.score.toFixed(3)}`).join('\n') ||
          'no entities',
      )
    })

  graph
    .command('relationships')
    .description('relationships by relation and/or entity, most confident first, as they hold now or --as-of')
    .addOption(agentOption())
    .option('--relation <relation>', 'e.g. "works at"')
    .option('--entity <name>', 'touching this entity (fuzzy name)')
    .option('--entity-id <id>', 'touching this entity (id)')
    .option('--as-of <date>', 'valid time: what was true then (ISO 8601)')
    .option('--known-at <date>', 'system time: as Engram believed it then (ISO 8601)')
    .option('--history', 'also relationships that ended or were retired')
    .option('--limit <n>', 'at most this many (1-500)', whole)
    .action(
      async (o: {
        agent?: string
        relation?: string
        entity?: string
        entityId?: string
        asOf?: string
        knownAt?: string
        history?: boolean
        limit?: number
      }) => {
        await run(
          (engram) =>
            engram.graphRelationships({
              agentId: o.agent,
              relation: o.relation,
              name: o.entity,
              entityId: o.entityId,
              asOf: o.asOf,
              knownAt: o.knownAt,
              includeHistory: o.history,
              limit: o.limit,
            }),
          (page) => page.relationships.map(relationshipLine).join('\n') || 'no relationships',
        )
      },
    )

  graph
    .command('neighbourhood [name]')
    .alias('around')
    .description('the entities and relationships around one entity (fuzzy name, or --id) up to --depth hops')
    .addOption(agentOption())
    .option('--id <id>', 'the entity by id')
    .option('--depth <n>', 'hops (1-4, default 2)', whole)
    .addOption(typeOption('--type <type...>', 'only entities of these types'))
    .option('--relation <relation>', 'only this relation (repeatable)', repeatable)
    .option('--as-of <date>', 'valid time (ISO 8601)')
    .option('--known-at <date>', 'system time (ISO 8601)')
    .option('--limit <n>', 'at most this many entities (1-500)', whole)
    .action(
      async (
        name: string | undefined,
        o: {
          agent?: string
          id?: string
          depth?: number
          type?: string[]
          relation?: string[]
          asOf?: string
          knownAt?: string
          limit?: number
        },
      ) => {
        await run(
          (engram) =>
            engram.graphNeighbourhood({
              agentId: o.agent,
              entityId: o.id,
              name,
              depth: o.depth,
              types: o.type?.map((t) => upperType(t) as EntityTypeName),
              relations: o.relation,
              asOf: o.asOf,
              knownAt: o.knownAt,
              limit: o.limit,
            }),
          (n) =>
            n.center
              ? [
                  ...n.nodes.map((node) => `${'  '.repeat(node.depth)}${entityLine(node.entity)}`),
                  ...n.relationships.map(relationshipLine),
                  ...(n.truncation ? [`(cut: ${n.truncation})`] : []),
                ].join('\n')
              : 'no such entity',
        )
      },
    )

  graph
    .command('paths <from> <to>')
    .description(
      'the shortest chains of relationships linking two entities (fuzzy names, or ids with --by-id)',
    )
    .addOption(agentOption())
    .option('--by-id', 'from and to are entity ids')
    .option('--max-depth <n>', 'longest chain in hops (1-4)', whole)
    .option('--as-of <date>', 'valid time (ISO 8601)')
    .option('--limit <n>', 'at most this many paths (1-20)', whole)
    .action(
      async (
        from: string,
        to: string,
        o: { agent?: string; byId?: boolean; maxDepth?: number; asOf?: string; limit?: number },
      ) => {
        await run(
          (engram) =>
            engram.graphPaths({
              agentId: o.agent,
              ...(o.byId ? { fromId: from, toId: to } : { fromName: from, toName: to }),
              maxDepth: o.maxDepth,
              asOf: o.asOf,
              limit: o.limit,
            }),
          (p) => {
            if (!p.from || !p.to) return `no entity named ${p.from ? to : from}`
            return (
              p.paths
                .map((path) => {
                  let text = path.entities[0]?.name ?? ''
                  path.relationships.forEach((r, i) => {
                    const next = path.entities[i + 1]?.name
                    text +=
                      r.source.id === path.entities[i]?.id
                        ? ` —${r.relation}→ ${next}`
                        : ` ←${r.relation}— ${next}`
                  })
                  return text
                })
                .join('\n') || `no path within ${o.maxDepth ?? 4} hops`
            )
          },
        )
      },
    )

  // An operator's corrections --------------------------------------------------------------------

  graph
    .command('add <type> <name>')
    .description('add an entity by hand (admin)')
    .addOption(agentOption())
    .option('--alias <name>', 'another name (repeatable)', repeatable)
    .option('--summary <text>', 'a line about it')
    .action(async (type: string, name: string, o: { agent?: string; alias?: string[]; summary?: string }) => {
      if (!(ENTITY_TYPES as readonly string[]).includes(type.toLowerCase()))
        throw new CliError(`type must be one of ${ENTITY_TYPES.join(', ')}`)
      await run(
        (engram) =>
          engram.createGraphEntity({
            agentId: o.agent,
            type: upperType(type) as EntityTypeName,
            name,
            aliases: o.alias,
            summary: o.summary,
          }),
        entityLine,
      )
    })

  graph
    .command('update <id>')
    .description("correct an entity's type, name, aliases (replaced) or summary (admin)")
    .addOption(agentOption())
    .addOption(typeOption('--type <type>', 'its type'))
    .option('--name <name>', 'its canonical name')
    .option('--alias <name>', 'the aliases, replacing them (repeatable)', repeatable)
    .option('--summary <text>', 'a line about it')
    .action(
      async (
        id: string,
        o: { agent?: string; type?: string; name?: string; alias?: string[]; summary?: string },
      ) => {
        await run(
          (engram) =>
            engram.updateGraphEntity({
              agentId: o.agent,
              id,
              type: upperType(o.type),
              name: o.name,
              aliases: o.alias,
              summary: o.summary,
            }),
          entityLine,
        )
      },
    )

  graph
    .command('merge <fromId> <intoId>')
    .description('make two entities one: the first’s relationships and names move onto the second (admin)')
    .addOption(agentOption())
    .action(async (fromId: string, intoId: string, o: { agent?: string }) => {
      await run((engram) => engram.mergeGraphEntities({ agentId: o.agent, fromId, intoId }), entityLine)
    })

  graph
    .command('remove <id>')
    .description('delete an entity and every relationship touching it (admin)')
    .addOption(agentOption())
    .action(async (id: string, o: { agent?: string }) => {
      await run(
        (engram) => engram.deleteGraphEntity({ agentId: o.agent, id }),
        (d) => `deleted entity ${d.id}`,
      )
    })

  graph
    .command('link <sourceId> <relation> <targetId>')
    .description(
      'add a relationship (admin); the same one again raises its confidence, and one contradicting a current exclusive relation (works at, lives in) ends it',
    )
    .addOption(agentOption())
    .option('--confidence <c>', '0 to 1 (default 1)', fraction)
    .option('--valid-from <date>', 'true in the world from (ISO 8601)')
    .option('--valid-until <date>', 'true in the world until (ISO 8601)')
    .action(
      async (
        sourceId: string,
        relation: string,
        targetId: string,
        o: { agent?: string; confidence?: number; validFrom?: string; validUntil?: string },
      ) => {
        await run(
          (engram) =>
            engram.createGraphRelationship({
              agentId: o.agent,
              sourceId,
              relation,
              targetId,
              confidence: o.confidence,
              validFrom: o.validFrom,
              validUntil: o.validUntil,
            }),
          relationshipLine,
        )
      },
    )

  graph
    .command('relink <id>')
    .description("correct a relationship's ends, relation, confidence or validity (admin)")
    .addOption(agentOption())
    .option('--source <id>', 'its source entity')
    .option('--relation <relation>', 'its relation')
    .option('--target <id>', 'its target entity')
    .option('--confidence <c>', '0 to 1', fraction)
    .option('--valid-from <date>', 'ISO 8601, or "open" for unbounded')
    .option('--valid-until <date>', 'ISO 8601, or "open" for unbounded')
    .action(
      async (
        id: string,
        o: {
          agent?: string
          source?: string
          relation?: string
          target?: string
          confidence?: number
          validFrom?: string
          validUntil?: string
        },
      ) => {
        const bound = (value: string | undefined) => (value === 'open' ? null : value)
        await run(
          (engram) =>
            engram.updateGraphRelationship({
              agentId: o.agent,
              id,
              sourceId: o.source,
              relation: o.relation,
              targetId: o.target,
              confidence: o.confidence,
              validFrom: bound(o.validFrom),
              validUntil: bound(o.validUntil),
            }),
          relationshipLine,
        )
      },
    )

  graph
    .command('retire <id>')
    .description('mark a relationship as wrong: Engram stops believing it now, its history stays (admin)')
    .addOption(agentOption())
    .option('--reason <text>', 'why it was wrong')
    .action(async (id: string, o: { agent?: string; reason?: string }) => {
      await run(
        (engram) => engram.retireGraphRelationship({ agentId: o.agent, id, reason: o.reason }),
        relationshipLine,
      )
    })

  graph
    .command('unlink <id>')
    .description('delete a relationship for good, with its history (admin)')
    .addOption(agentOption())
    .action(async (id: string, o: { agent?: string }) => {
      await run(
        (engram) => engram.deleteGraphRelationship({ agentId: o.agent, id }),
        (d) => `deleted relationship ${d.id}`,
      )
    })
}
