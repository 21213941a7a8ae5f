import { edgeHoldsAt, type GraphTime, NotFoundError } from '@engram/core'
import type { GraphRepository, NewGraphEntity, NewGraphRelationship, Storage } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const at = (iso: string) => new Date(iso)
const T0 = at('2026-01-10T00:00:00.000Z')

const entity = (name: string, extra: Partial<NewGraphEntity> = {}): NewGraphEntity => ({
  userId: null,
  type: 'PERSON',
  name,
  aliases: [],
  summary: null,
  embedding: null,
  mentionCount: 1,
  origin: 'FORMED',
  firstSeenAt: T0,
  lastSeenAt: T0,
  createdAt: T0,
  ...extra,
})

const edge = (
  sourceId: string,
  relation: string,
  targetId: string,
  extra: Partial<NewGraphRelationship> = {},
): NewGraphRelationship => ({
  userId: null,
  sourceId,
  relation,
  targetId,
  confidence: 0.7,
  validFrom: null,
  validUntil: null,
  learntAt: T0,
  origin: 'FORMED',
  createdAt: T0,
  ...extra,
})

const names = (rows: { name: string }[]) => rows.map((r) => r.name)

async function twoAgents(storage: Storage): Promise<GraphRepository> {
  await storage.repositories.agents.upsert('agent-a', null)
  await storage.repositories.agents.upsert('agent-b', null)
  return storage.graph
}

export function describeGraph(initializer: StorageInitializer): void {
  describe(`${initializer.name}: knowledge graph`, () => {
    const fixture = useFixture(initializer)

    it('stores an entity as given and finds it by id, exact name or alias, and shared tokens', async () => {
      const graph = await twoAgents(fixture().storage)
      const embedding = new Float32Array([0.25, -1.5, 3])
      const dana = await graph.createEntity(
        'agent-a',
        entity('Dana Kim', { aliases: ['Dana', 'D. Kim'], summary: 'tech lead', embedding, userId: 'u1' }),
      )
      expect(dana).toMatchObject({
        agentId: 'agent-a',
        userId: 'u1',
        type: 'PERSON',
        name: 'Dana Kim',
        normalizedName: 'dana kim',
        aliases: ['Dana', 'D. Kim'],
        summary: 'tech lead',
        mentionCount: 1,
        origin: 'FORMED',
      })
      expect(dana.createdAt.getTime()).toBe(T0.getTime())
      expect(dana.updatedAt.getTime()).toBe(T0.getTime())
      expect([...(dana.embedding ?? [])]).toEqual([0.25, -1.5, 3])
      const acme = await graph.createEntity(
        'agent-a',
        entity('Acme Corp', { type: 'COMPANY', mentionCount: 5 }),
      )
      const found = await graph.findEntity('agent-a', dana.id)
      expect(found).toMatchObject({ name: 'Dana Kim', aliases: ['Dana', 'D. Kim'] })
      expect([...(found?.embedding ?? [])]).toEqual([0.25, -1.5, 3])
      expect(await graph.findEntity('agent-a', 'not-an-id')).toBeNull()
      expect(names(await graph.entitiesByIds('agent-a', [acme.id, 'nope', dana.id]))).toEqual([
        'Acme Corp',
        'Dana Kim',
      ])

      expect(names(await graph.entitiesByName('agent-a', 'dana kim'))).toEqual(['Dana Kim'])
      expect(names(await graph.entitiesByName('agent-a', 'dana'))).toEqual(['Dana Kim'])
      expect(names(await graph.entitiesByName('agent-a', 'd kim'))).toEqual(['Dana Kim'])
      expect(await graph.entitiesByName('agent-a', 'kim')).toEqual([])
      // Tokens of the name and of every alias; most mentioned first.
      expect(names(await graph.entitiesByTokens('agent-a', ['kim'], 10))).toEqual(['Dana Kim'])
      expect(names(await graph.entitiesByTokens('agent-a', ['d'], 10))).toEqual(['Dana Kim'])
      expect(names(await graph.entitiesByTokens('agent-a', ['corp', 'dana'], 10))).toEqual([
        'Acme Corp',
        'Dana Kim',
      ])
      expect(names(await graph.entitiesByTokens('agent-a', ['corp', 'dana'], 1))).toEqual(['Acme Corp'])
      expect(await graph.entitiesByTokens('agent-a', [], 10)).toEqual([])

      // A new name and aliases replace what the lookups answer to.
      const renamed = await graph.updateEntity('agent-a', dana.id, {
        name: 'Dana Kim-Lee',
        aliases: ['DK'],
        embedding: null,
        mentionCount: 3,
        updatedAt: at('2026-01-11T00:00:00.000Z'),
      })
      expect(renamed).toMatchObject({
        name: 'Dana Kim-Lee',
        normalizedName: 'dana kim lee',
        aliases: ['DK'],
        embedding: null,
      })
      expect(renamed.updatedAt.getTime()).toBe(at('2026-01-11T00:00:00.000Z').getTime())
      expect(await graph.entitiesByName('agent-a', 'dana')).toEqual([])
      expect(names(await graph.entitiesByName('agent-a', 'dk'))).toEqual(['Dana Kim-Lee'])
      expect(names(await graph.entitiesByName('agent-a', 'dana kim lee'))).toEqual(['Dana Kim-Lee'])
      expect(await graph.entitiesByTokens('agent-a', ['d'], 10)).toEqual([])
      expect(names(await graph.entitiesByTokens('agent-a', ['lee'], 10))).toEqual(['Dana Kim-Lee'])
      // Only aliases changed: the name still answers.
      await graph.updateEntity('agent-a', dana.id, { aliases: ['Danny'], updatedAt: T0 })
      expect(names(await graph.entitiesByName('agent-a', 'danny'))).toEqual(['Dana Kim-Lee'])
      expect(names(await graph.entitiesByName('agent-a', 'dana kim lee'))).toEqual(['Dana Kim-Lee'])
      expect(await graph.entitiesByName('agent-a', 'dk')).toEqual([])
    })

    it('searches entities by name or alias substring, type and user, most mentioned first, ties by id', async () => {
      const graph = await twoAgents(fixture().storage)
      const ada = await graph.createEntity(
        'agent-a',
        entity('Ada Lovelace', { mentionCount: 2, userId: 'u1' }),
      )
      const adam = await graph.createEntity('agent-a', entity('Adam Smith', { mentionCount: 2 }))
      const acme = await graph.createEntity(
        'agent-a',
        entity('Acme', { type: 'COMPANY', aliases: ['Adaptive Corp'], mentionCount: 9 }),
      )
      await graph.createEntity('agent-a', entity('Berlin', { type: 'PLACE', mentionCount: 4 }))
      const theirs = await graph.createEntity('agent-b', entity('Ada Byron', { mentionCount: 1 }))
      // The entity created first wins a tie of mentions (ids grow with creation).
      expect(names(await graph.searchEntities('agent-a', { nameContains: 'ada' }, 0, 10))).toEqual([
        'Acme',
        'Ada Lovelace',
        'Adam Smith',
      ])
      expect(await graph.countEntities('agent-a', { nameContains: 'ada' })).toBe(3)
      expect(names(await graph.searchEntities('agent-a', { nameContains: 'ada' }, 1, 1))).toEqual([
        'Ada Lovelace',
      ])
      expect(names(await graph.searchEntities('agent-a', { type: 'PERSON' }, 0, 10))).toEqual([
        'Ada Lovelace',
        'Adam Smith',
      ])
      expect(names(await graph.searchEntities('agent-a', { userId: 'u1' }, 0, 10))).toEqual(['Ada Lovelace'])
      expect(await graph.countEntities('agent-a', { userId: null })).toBe(3)
      expect(await graph.countEntities('agent-a', {})).toBe(4)
      // A null agent is an admin's view of every agent.
      expect(names(await graph.searchEntities(null, { nameContains: 'ada' }, 0, 10))).toEqual([
        'Acme',
        'Ada Lovelace',
        'Adam Smith',
        'Ada Byron',
      ])
      expect(await graph.countEntities(null, {})).toBe(5)
      expect([ada.id, adam.id, acme.id, theirs.id].every((id) => typeof id === 'string')).toBe(true)
    })

    it('answers only the entities learnt by learntBy (createdAt ≤ learntBy, the bound included)', async () => {
      const graph = await twoAgents(fixture().storage)
      const T1 = at('2026-02-01T00:00:00.000Z')
      await graph.createEntity('agent-a', entity('Ada Lovelace', { mentionCount: 3 }))
      await graph.createEntity('agent-a', entity('Adam Smith', { mentionCount: 2, createdAt: T1 }))
      await graph.createEntity('agent-b', entity('Ada Byron', { createdAt: T0 }))
      const before = new Date(T1.getTime() - 1)
      expect(names(await graph.searchEntities('agent-a', { learntBy: before }, 0, 10))).toEqual([
        'Ada Lovelace',
      ])
      expect(await graph.countEntities('agent-a', { learntBy: before })).toBe(1)
      expect(
        names(await graph.searchEntities('agent-a', { learntBy: T1, nameContains: 'ada' }, 0, 10)),
      ).toEqual(['Ada Lovelace', 'Adam Smith'])
      expect(await graph.countEntities('agent-a', { learntBy: T1 })).toBe(2)
      expect(await graph.countEntities('agent-a', { learntBy: new Date(T0.getTime() - 1) })).toBe(0)
      expect(await graph.countEntities(null, { learntBy: before })).toBe(2)
    })

    it("never reaches another agent's entities, relationships or evidence, and changes nothing of theirs", async () => {
      const graph = await twoAgents(fixture().storage)
      const b1 = await graph.createEntity('agent-b', entity('Bea Secret', { aliases: ['Bea'] }))
      const b2 = await graph.createEntity('agent-b', entity('Bunker', { type: 'PLACE' }))
      const a1 = await graph.createEntity('agent-a', entity('Ann'))
      const rel = await graph.createRelationship('agent-b', edge(b1.id, 'lives in', b2.id))
      await graph.addEvidence(
        'agent-b',
        [{ entityId: null, relationshipId: rel.id, memoryId: 'm1', messageId: null }],
        T0,
      )
      await graph.addEvidence(
        'agent-b',
        [{ entityId: b1.id, relationshipId: null, memoryId: 'm1', messageId: null }],
        T0,
      )

      expect(await graph.findEntity('agent-a', b1.id)).toBeNull()
      expect(await graph.entitiesByIds('agent-a', [b1.id, b2.id])).toEqual([])
      expect(await graph.entitiesByName('agent-a', 'bea')).toEqual([])
      expect(await graph.entitiesByTokens('agent-a', ['bea', 'secret', 'bunker'], 10)).toEqual([])
      expect(await graph.searchEntities('agent-a', { nameContains: 'b' }, 0, 10)).toEqual([])
      expect(await graph.countEntities('agent-a', {})).toBe(1)
      expect(await graph.findRelationship('agent-a', rel.id)).toBeNull()
      expect(await graph.relationships('agent-a', {}, 0, 10)).toEqual([])
      expect(await graph.countRelationships('agent-a', { entityIds: [b1.id] })).toBe(0)
      expect(await graph.countEdgesOf('agent-a', b1.id)).toBe(0)
      expect(await graph.evidenceOf('agent-a', { relationshipIds: [rel.id], entityIds: [b1.id] })).toEqual([])

      const notFound = expect.any(NotFoundError)
      await expect(graph.updateEntity('agent-a', b1.id, { name: 'x', updatedAt: T0 })).rejects.toEqual(
        notFound,
      )
      await expect(graph.deleteEntity('agent-a', b1.id)).rejects.toEqual(notFound)
      await expect(graph.createRelationship('agent-a', edge(a1.id, 'knows', b1.id))).rejects.toEqual(notFound)
      await expect(graph.createRelationship('agent-a', edge(b1.id, 'knows', a1.id))).rejects.toEqual(notFound)
      await expect(
        graph.updateRelationship('agent-a', rel.id, { confidence: 0, updatedAt: T0 }),
      ).rejects.toEqual(notFound)
      await expect(graph.deleteRelationship('agent-a', rel.id)).rejects.toEqual(notFound)
      await expect(graph.reassignEntity('agent-a', b1.id, a1.id, T0)).rejects.toEqual(notFound)
      await expect(graph.reassignEntity('agent-a', a1.id, b1.id, T0)).rejects.toEqual(notFound)
      await expect(
        graph.addEvidence(
          'agent-a',
          [{ entityId: b1.id, relationshipId: null, memoryId: 'm2', messageId: null }],
          T0,
        ),
      ).rejects.toEqual(notFound)
      await expect(
        graph.addEvidence(
          'agent-a',
          [{ entityId: null, relationshipId: rel.id, memoryId: 'm2', messageId: null }],
          T0,
        ),
      ).rejects.toEqual(notFound)
      expect(await graph.forgetSources('agent-a', { memoryIds: ['m1'] })).toEqual({
        relationships: 0,
        entities: 0,
      })
      expect(await graph.clear('agent-a')).toEqual({ relationships: 0, entities: 1 })

      // Agent B's graph is whole.
      expect(await graph.findEntity('agent-b', b1.id)).toMatchObject({ name: 'Bea Secret' })
      expect(await graph.findRelationship('agent-b', rel.id)).toMatchObject({
        confidence: 0.7,
        relation: 'lives in',
      })
      expect(
        await graph.evidenceOf('agent-b', { relationshipIds: [rel.id], entityIds: [b1.id] }),
      ).toHaveLength(2)
      expect(await graph.countEntities('agent-b', {})).toBe(2)
    })

    it('lists relationships by confidence, then newest learnt, then id, narrowed by every filter field', async () => {
      const graph = await twoAgents(fixture().storage)
      const dana = await graph.createEntity('agent-a', entity('Dana'))
      const acme = await graph.createEntity('agent-a', entity('Acme', { type: 'COMPANY' }))
      const berlin = await graph.createEntity('agent-a', entity('Berlin', { type: 'PLACE' }))
      const eve = await graph.createEntity('agent-a', entity('Eve'))
      const works = await graph.createRelationship(
        'agent-a',
        edge(dana.id, 'works at', acme.id, { confidence: 0.9 }),
      )
      const lives = await graph.createRelationship(
        'agent-a',
        edge(dana.id, 'lives in', berlin.id, { confidence: 0.5, learntAt: at('2026-01-12T00:00:00.000Z') }),
      )
      const based = await graph.createRelationship(
        'agent-a',
        edge(acme.id, 'based in', berlin.id, {
          confidence: 0.5,
          learntAt: at('2026-01-11T00:00:00.000Z'),
          userId: 'u1',
        }),
      )
      const knows1 = await graph.createRelationship(
        'agent-a',
        edge(eve.id, 'knows', dana.id, { confidence: 0.3 }),
      )
      const knows2 = await graph.createRelationship(
        'agent-a',
        edge(dana.id, 'knows', eve.id, { confidence: 0.3 }),
      )
      await graph.createRelationship(
        'agent-b',
        edge(
          (await graph.createEntity('agent-b', entity('X'))).id,
          'knows',
          (await graph.createEntity('agent-b', entity('Y'))).id,
        ),
      )
      const ids = (rows: { id: string }[]) => rows.map((r) => r.id)
      expect(ids(await graph.relationships('agent-a', {}, 0, 10))).toEqual([
        works.id,
        lives.id,
        based.id,
        knows1.id,
        knows2.id,
      ])
      expect(ids(await graph.relationships('agent-a', {}, 1, 2))).toEqual([lives.id, based.id])
      expect(await graph.countRelationships('agent-a', {})).toBe(5)
      expect(await graph.countRelationships(null, {})).toBe(6)
      expect(ids(await graph.relationships('agent-a', { relations: ['knows', 'based in'] }, 0, 10))).toEqual([
        based.id,
        knows1.id,
        knows2.id,
      ])
      expect(ids(await graph.relationships('agent-a', { entityIds: [berlin.id] }, 0, 10))).toEqual([
        lives.id,
        based.id,
      ])
      expect(ids(await graph.relationships('agent-a', { entityIds: [eve.id, acme.id] }, 0, 10))).toEqual([
        works.id,
        based.id,
        knows1.id,
        knows2.id,
      ])
      expect(ids(await graph.relationships('agent-a', { minConfidence: 0.5 }, 0, 10))).toEqual([
        works.id,
        lives.id,
        based.id,
      ])
      expect(ids(await graph.relationships('agent-a', { userId: 'u1' }, 0, 10))).toEqual([based.id])
      expect(await graph.countRelationships('agent-a', { userId: null })).toBe(4)
      expect(
        ids(
          await graph.relationships(
            'agent-a',
            { relations: ['knows'], entityIds: [dana.id], minConfidence: 0.3 },
            0,
            10,
          ),
        ),
      ).toEqual([knows1.id, knows2.id])
      expect(await graph.countEdgesOf('agent-a', dana.id)).toBe(4)
      expect(await graph.countEdgesOf('agent-a', berlin.id)).toBe(2)
    })

    it('answers "as of" and "known at" reads as core\'s edgeHoldsAt does, bounds included', async () => {
      const graph = await twoAgents(fixture().storage)
      const dana = await graph.createEntity('agent-a', entity('Dana'))
      const acme = await graph.createEntity('agent-a', entity('Acme', { type: 'COMPANY' }))
      const globex = await graph.createEntity('agent-a', entity('Globex', { type: 'COMPANY' }))
      const jan = at('2026-01-01T00:00:00.000Z')
      const mar = at('2026-03-01T00:00:00.000Z')
      const old = await graph.createRelationship(
        'agent-a',
        edge(dana.id, 'works at', acme.id, { validFrom: jan, learntAt: at('2026-01-05T00:00:00.000Z') }),
      )
      const current = await graph.createRelationship(
        'agent-a',
        edge(dana.id, 'works at', globex.id, { validFrom: mar, learntAt: at('2026-03-02T00:00:00.000Z') }),
      )
      // The new job ends the old one's validity; it is not overwritten.
      await graph.updateRelationship('agent-a', old.id, {
        validUntil: mar,
        supersededById: current.id,
        updatedAt: mar,
      })
      const wrong = await graph.createRelationship(
        'agent-a',
        edge(dana.id, 'lives in', acme.id, { learntAt: at('2026-02-01T00:00:00.000Z') }),
      )
      await graph.updateRelationship('agent-a', wrong.id, {
        retiredAt: at('2026-02-10T00:00:00.000Z'),
        retiredReason: 'an operator corrected it',
        updatedAt: at('2026-02-10T00:00:00.000Z'),
      })
      expect(await graph.findRelationship('agent-a', old.id)).toMatchObject({ supersededById: current.id })
      expect(await graph.findRelationship('agent-a', wrong.id)).toMatchObject({
        retiredReason: 'an operator corrected it',
      })
      const all = await graph.relationships('agent-a', {}, 0, 10)
      expect(all).toHaveLength(3)
      const points: [string, string][] = [
        ['2025-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z'],
        ['2026-01-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
        ['2026-02-15T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
        ['2026-02-28T23:59:59.999Z', '2026-12-01T00:00:00.000Z'],
        ['2026-03-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
        ['2026-03-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
        ['2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z'],
        ['2026-02-05T00:00:00.000Z', '2026-01-04T23:59:59.999Z'],
        ['2026-02-05T00:00:00.000Z', '2026-01-05T00:00:00.000Z'],
        ['2026-02-05T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
        ['2026-02-05T00:00:00.000Z', '2026-02-09T23:59:59.999Z'],
        ['2026-02-05T00:00:00.000Z', '2026-02-10T00:00:00.000Z'],
      ]
      const seen: string[][] = []
      for (const [asOf, knownAt] of points) {
        const time: GraphTime = { asOf: at(asOf), knownAt: at(knownAt) }
        const held = (await graph.relationships('agent-a', { at: time }, 0, 10)).map((r) => r.id).sort()
        expect(held, `asOf ${asOf}, knownAt ${knownAt}`).toEqual(
          all
            .filter((r) => edgeHoldsAt(r, time))
            .map((r) => r.id)
            .sort(),
        )
        expect(await graph.countRelationships('agent-a', { at: time })).toBe(held.length)
        seen.push(held)
      }
      // The points are not all alike: the filter decides something at each boundary.
      expect(seen[0]).toEqual([])
      expect(seen[1]).toEqual([old.id])
      expect(seen[3]).toEqual([old.id])
      expect(seen[4]).toEqual([current.id])
      expect(seen[5]).toEqual([])
      expect(seen[6]).toEqual([current.id])
      expect(seen[7]).toEqual([])
      expect(seen[8]).toEqual([old.id])
      expect(seen[9]).toEqual([old.id, wrong.id].sort())
      expect(seen[10]).toEqual([old.id, wrong.id].sort())
      expect(seen[11]).toEqual([old.id])
    })

    it('records evidence once per (subject, memory, message) and reads it by subject', async () => {
      const graph = await twoAgents(fixture().storage)
      const dana = await graph.createEntity('agent-a', entity('Dana'))
      const acme = await graph.createEntity('agent-a', entity('Acme', { type: 'COMPANY' }))
      const rel = await graph.createRelationship('agent-a', edge(dana.id, 'works at', acme.id))
      const sources = [
        { entityId: dana.id, relationshipId: null, memoryId: 'm1', messageId: 't1' },
        { entityId: dana.id, relationshipId: null, memoryId: 'm1', messageId: 't1' },
        { entityId: dana.id, relationshipId: null, memoryId: 'm1', messageId: null },
        { entityId: null, relationshipId: rel.id, memoryId: null, messageId: 't1' },
      ]
      await graph.addEvidence('agent-a', sources, T0)
      await graph.addEvidence('agent-a', sources.slice(0, 2), at('2026-01-11T00:00:00.000Z'))
      const ofDana = await graph.evidenceOf('agent-a', { entityIds: [dana.id] })
      expect(ofDana.map((e) => [e.memoryId, e.messageId]).sort()).toEqual([
        ['m1', null],
        ['m1', 't1'],
      ])
      expect(ofDana.every((e) => e.entityId === dana.id && e.relationshipId === null)).toBe(true)
      expect(ofDana.every((e) => e.createdAt.getTime() === T0.getTime())).toBe(true)
      expect(await graph.evidenceOf('agent-a', { relationshipIds: [rel.id] })).toEqual([
        { entityId: null, relationshipId: rel.id, memoryId: null, messageId: 't1', createdAt: T0 },
      ])
      expect(await graph.evidenceOf('agent-a', { entityIds: [acme.id] })).toEqual([])
      expect(await graph.evidenceOf('agent-a', {})).toEqual([])
    })

    it('forgets deleted memories and messages: formed rows left unsupported go, manual ones and used entities stay', async () => {
      const graph = await twoAgents(fixture().storage)
      const dana = await graph.createEntity('agent-a', entity('Dana'))
      const acme = await graph.createEntity('agent-a', entity('Acme', { type: 'COMPANY' }))
      const berlin = await graph.createEntity('agent-a', entity('Berlin', { type: 'PLACE' }))
      const boss = await graph.createEntity('agent-a', entity('Boss', { origin: 'MANUAL' }))
      const lone = await graph.createEntity('agent-a', entity('Lone'))
      const works = await graph.createRelationship('agent-a', edge(dana.id, 'works at', acme.id))
      const lives = await graph.createRelationship('agent-a', edge(dana.id, 'lives in', berlin.id))
      const manual = await graph.createRelationship(
        'agent-a',
        edge(boss.id, 'manages', dana.id, { origin: 'MANUAL' }),
      )
      const ev = (
        subject: { entityId?: string; relationshipId?: string },
        memoryId: string | null,
        messageId: string | null,
      ) => ({
        entityId: subject.entityId ?? null,
        relationshipId: subject.relationshipId ?? null,
        memoryId,
        messageId,
      })
      await graph.addEvidence(
        'agent-a',
        [
          ev({ entityId: dana.id }, 'm1', null),
          ev({ entityId: acme.id }, 'm1', null),
          ev({ relationshipId: works.id }, 'm1', null),
          ev({ relationshipId: works.id }, null, 't2'),
          ev({ entityId: berlin.id }, null, 't1'),
          ev({ relationshipId: lives.id }, null, 't1'),
          ev({ entityId: boss.id }, 'm1', null),
          ev({ relationshipId: manual.id }, 'm1', null),
          ev({ entityId: lone.id }, 'm3', null),
        ],
        T0,
      )
      // m1 goes: "works at" still has t2; Dana and Acme lost their evidence but an edge uses them;
      // the manual Boss and its edge stay whatever their evidence.
      expect(await graph.forgetSources('agent-a', { memoryIds: ['m1', 'unknown'] })).toEqual({
        relationships: 0,
        entities: 0,
      })
      expect(await graph.evidenceOf('agent-a', { relationshipIds: [works.id] })).toHaveLength(1)
      expect(await graph.evidenceOf('agent-a', { entityIds: [dana.id, acme.id, boss.id] })).toEqual([])
      // t1 goes: "lives in" loses its last source; Berlin then has neither evidence nor an edge.
      expect(await graph.forgetSources('agent-a', { messageIds: ['t1'] })).toEqual({
        relationships: 1,
        entities: 1,
      })
      expect(await graph.findRelationship('agent-a', lives.id)).toBeNull()
      expect(await graph.findEntity('agent-a', berlin.id)).toBeNull()
      // t2 goes: "works at" and then Acme go; Dana stays while the manual edge uses her.
      expect(await graph.forgetSources('agent-a', { messageIds: ['t2'] })).toEqual({
        relationships: 1,
        entities: 1,
      })
      expect(await graph.findEntity('agent-a', acme.id)).toBeNull()
      expect(await graph.findEntity('agent-a', dana.id)).toMatchObject({ name: 'Dana' })
      expect(await graph.findEntity('agent-a', boss.id)).toMatchObject({ name: 'Boss' })
      expect(await graph.findRelationship('agent-a', manual.id)).toMatchObject({ relation: 'manages' })
      // Memory and message sources in one call; an entity with no edge goes with its last source.
      expect(await graph.forgetSources('agent-a', { memoryIds: ['m3'], messageIds: ['t9'] })).toEqual({
        relationships: 0,
        entities: 1,
      })
      expect(await graph.findEntity('agent-a', lone.id)).toBeNull()
      expect(await graph.forgetSources('agent-a', {})).toEqual({ relationships: 0, entities: 0 })
    })

    it('deletes an entity with every relationship touching it and their evidence', async () => {
      const graph = await twoAgents(fixture().storage)
      const dana = await graph.createEntity('agent-a', entity('Dana'))
      const acme = await graph.createEntity('agent-a', entity('Acme', { type: 'COMPANY' }))
      const globex = await graph.createEntity('agent-a', entity('Globex', { type: 'COMPANY' }))
      const works = await graph.createRelationship('agent-a', edge(dana.id, 'works at', acme.id))
      const partner = await graph.createRelationship('agent-a', edge(acme.id, 'partners with', globex.id))
      const current = await graph.createRelationship('agent-a', edge(dana.id, 'works at', globex.id))
      await graph.updateRelationship('agent-a', works.id, {
        validUntil: T0,
        supersededById: current.id,
        updatedAt: T0,
      })
      await graph.addEvidence(
        'agent-a',
        [
          { entityId: dana.id, relationshipId: null, memoryId: 'm1', messageId: null },
          { entityId: null, relationshipId: works.id, memoryId: 'm1', messageId: null },
          { entityId: null, relationshipId: current.id, memoryId: 'm2', messageId: null },
        ],
        T0,
      )
      await graph.deleteEntity('agent-a', dana.id)
      expect(await graph.findEntity('agent-a', dana.id)).toBeNull()
      expect(await graph.findRelationship('agent-a', works.id)).toBeNull()
      expect(await graph.findRelationship('agent-a', current.id)).toBeNull()
      expect(await graph.relationships('agent-a', {}, 0, 10)).toEqual([
        expect.objectContaining({ id: partner.id }),
      ])
      expect(
        await graph.evidenceOf('agent-a', { entityIds: [dana.id], relationshipIds: [works.id, current.id] }),
      ).toEqual([])
      expect(await graph.entitiesByName('agent-a', 'dana')).toEqual([])
      await expect(graph.deleteEntity('agent-a', dana.id)).rejects.toBeInstanceOf(NotFoundError)
      // Deleting a relationship takes its evidence; the edge it superseded keeps its row.
      const next = await graph.createRelationship('agent-a', edge(acme.id, 'partners with', globex.id))
      await graph.updateRelationship('agent-a', partner.id, { supersededById: next.id, updatedAt: T0 })
      await graph.addEvidence(
        'agent-a',
        [{ entityId: null, relationshipId: next.id, memoryId: 'm3', messageId: null }],
        T0,
      )
      await graph.deleteRelationship('agent-a', next.id)
      expect(await graph.evidenceOf('agent-a', { relationshipIds: [next.id] })).toEqual([])
      expect(await graph.findRelationship('agent-a', partner.id)).toMatchObject({
        relation: 'partners with',
        supersededById: null,
      })
      await expect(graph.deleteRelationship('agent-a', next.id)).rejects.toBeInstanceOf(NotFoundError)
    })

    it('moves relationships and evidence onto the entity another is merged into', async () => {
      const graph = await twoAgents(fixture().storage)
      const dana = await graph.createEntity('agent-a', entity('Dana Kim'))
      const dupe = await graph.createEntity('agent-a', entity('D. Kim'))
      const acme = await graph.createEntity('agent-a', entity('Acme', { type: 'COMPANY' }))
      const eve = await graph.createEntity('agent-a', entity('Eve'))
      const works = await graph.createRelationship('agent-a', edge(dupe.id, 'works at', acme.id))
      const knows = await graph.createRelationship('agent-a', edge(eve.id, 'knows', dupe.id))
      await graph.addEvidence(
        'agent-a',
        [
          { entityId: dana.id, relationshipId: null, memoryId: 'm1', messageId: null },
          { entityId: dupe.id, relationshipId: null, memoryId: 'm1', messageId: null },
          { entityId: dupe.id, relationshipId: null, memoryId: 'm2', messageId: 't2' },
        ],
        T0,
      )
      const merged = at('2026-01-20T00:00:00.000Z')
      await graph.reassignEntity('agent-a', dupe.id, dana.id, merged)
      expect(await graph.findEntity('agent-a', dupe.id)).toBeNull()
      expect(await graph.entitiesByName('agent-a', 'd kim')).toEqual([])
      const moved = await graph.findRelationship('agent-a', works.id)
      expect(moved).toMatchObject({ sourceId: dana.id, targetId: acme.id })
      expect(moved?.updatedAt.getTime()).toBe(merged.getTime())
      expect(await graph.findRelationship('agent-a', knows.id)).toMatchObject({
        sourceId: eve.id,
        targetId: dana.id,
      })
      const evidence = await graph.evidenceOf('agent-a', { entityIds: [dana.id] })
      expect(evidence.map((e) => [e.memoryId, e.messageId]).sort()).toEqual([
        ['m1', null],
        ['m2', 't2'],
      ])
      expect(await graph.countEdgesOf('agent-a', dana.id)).toBe(2)
      await expect(graph.reassignEntity('agent-a', dupe.id, dana.id, merged)).rejects.toBeInstanceOf(
        NotFoundError,
      )
    })

    it("clears an agent's whole graph and no other's", async () => {
      const graph = await twoAgents(fixture().storage)
      const a = await graph.createEntity('agent-a', entity('Ann'))
      const b = await graph.createEntity('agent-a', entity('Bob'))
      const rel = await graph.createRelationship('agent-a', edge(a.id, 'knows', b.id))
      await graph.addEvidence(
        'agent-a',
        [{ entityId: null, relationshipId: rel.id, memoryId: 'm1', messageId: null }],
        T0,
      )
      const theirs = await graph.createEntity('agent-b', entity('Ann'))
      expect(await graph.clear('agent-a')).toEqual({ relationships: 1, entities: 2 })
      expect(await graph.countEntities('agent-a', {})).toBe(0)
      expect(await graph.countRelationships('agent-a', {})).toBe(0)
      expect(await graph.evidenceOf('agent-a', { relationshipIds: [rel.id] })).toEqual([])
      expect(await graph.entitiesByName('agent-a', 'ann')).toEqual([])
      expect(names(await graph.entitiesByName('agent-b', 'ann'))).toEqual(['Ann'])
      expect(await graph.findEntity('agent-b', theirs.id)).not.toBeNull()
      expect(await graph.clear('agent-a')).toEqual({ relationships: 0, entities: 0 })
    })

    it('rolls back every write of a transaction that throws, and commits one that returns', async () => {
      const graph = await twoAgents(fixture().storage)
      const dana = await graph.createEntity('agent-a', entity('Dana'))
      await expect(
        graph.transaction(async (tx) => {
          const acme = await tx.createEntity('agent-a', entity('Acme', { type: 'COMPANY' }))
          const rel = await tx.createRelationship('agent-a', edge(dana.id, 'works at', acme.id))
          await tx.addEvidence(
            'agent-a',
            [{ entityId: null, relationshipId: rel.id, memoryId: 'm1', messageId: null }],
            T0,
          )
          await tx.updateEntity('agent-a', dana.id, { mentionCount: 7, aliases: ['Dee'], updatedAt: T0 })
          // Reads inside see the transaction's writes.
          expect(names(await tx.entitiesByName('agent-a', 'acme'))).toEqual(['Acme'])
          throw new Error('resolution failed')
        }),
      ).rejects.toThrow('resolution failed')
      expect(await graph.countEntities('agent-a', {})).toBe(1)
      expect(await graph.countRelationships('agent-a', {})).toBe(0)
      expect(await graph.entitiesByName('agent-a', 'acme')).toEqual([])
      expect(await graph.entitiesByName('agent-a', 'dee')).toEqual([])
      expect(await graph.findEntity('agent-a', dana.id)).toMatchObject({ mentionCount: 1, aliases: [] })

      const id = await graph.transaction(async (tx) => {
        const acme = await tx.createEntity('agent-a', entity('Acme', { type: 'COMPANY' }))
        return (await tx.createRelationship('agent-a', edge(dana.id, 'works at', acme.id))).id
      })
      expect(await graph.findRelationship('agent-a', id)).toMatchObject({ relation: 'works at' })
    })
  })
}
