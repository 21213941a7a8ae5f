import { describe, expect, it } from 'vitest'
import { eventDate, extractGraphOffline, typeFromName } from './extract.ts'
import { normalizeGraphAnswer } from './llm-graph.ts'

const reference = new Date('2025-06-01T00:00:00Z')
const edges = (text: string, speaker: string | null = null) =>
  extractGraphOffline(text, { reference, speaker }).relations.map(
    (r) => `${r.source} -${r.relation}-> ${r.target}`,
  )
const types = (text: string, speaker: string | null = null) =>
  Object.fromEntries(extractGraphOffline(text, { reference, speaker }).entities.map((e) => [e.name, e.type]))

describe('extractGraphOffline', () => {
  it('reads the relation patterns', () => {
    expect(edges('Dana Kim works at Acme Corp.')).toEqual(['Dana Kim -works at-> Acme Corp'])
    expect(edges('Dana works for Initech.')).toEqual(['Dana -works at-> Initech'])
    expect(edges('Yesterday Caroline joined Google.')).toEqual(['Caroline -works at-> Google'])
    expect(edges('Jon is the tech lead on Project Atlas.')).toEqual(['Jon -tech lead on-> Project Atlas'])
    expect(edges('Priya manages Tom.')).toEqual(['Priya -manages-> Tom'])
    expect(edges('In 2023 Dana moved to Berlin.')).toEqual(['Dana -lives in-> Berlin'])
    expect(edges('Gina lives in Rome.')).toEqual(['Gina -lives in-> Rome'])
    expect(edges('Lena is married to Tom.')).toEqual(['Lena -married to-> Tom'])
    expect(edges('The Atlas project depends on Postgres.')).toEqual(['Atlas -depends on-> Postgres'])
    expect(edges('Gina uses Door Dash for deliveries.')).toEqual(['Gina -uses-> Door Dash'])
    expect(edges('Melanie has a dog named Luna.')).toEqual(['Luna -pet of-> Melanie'])
    expect(edges('Jon went to Paris last week.')).toEqual(['Jon -visited-> Paris'])
    expect(edges('Caroline attended the Pride Parade.')).toEqual(['Caroline -attended-> Pride Parade'])
    expect(edges('Caroline grew up in Sweden.')).toEqual(['Caroline -from-> Sweden'])
    expect(edges('Caroline moved from Sweden 4 years ago.')).toEqual(['Caroline -from-> Sweden'])
    // The name only begins the phrase ("the LGBTQ support group"): no place is read into it, the
    // whole noun phrase is what she went to (the activity pass, activities.ts).
    expect(edges('Caroline went to the LGBTQ support group.')).toEqual([
      'Caroline -attended-> LGBTQ support group',
    ])
  })

  it('reads possessive kinship both ways round: the sister is the source', () => {
    expect(edges("Dana's sister Lena lives in Berlin.")).toEqual([
      'Lena -lives in-> Berlin',
      'Lena -sister of-> Dana',
    ])
    expect(edges("Lena is Dana's sister.")).toEqual(['Lena -sister of-> Dana'])
    expect(edges("Caroline's mom Linda visited.")).toEqual(['Linda -mother of-> Caroline'])
  })

  it('restates the first person about the speaker, and says nothing of "I" when no speaker is known', () => {
    expect(edges('I work at Acme and my sister Lena is married to Tom.', 'dana')).toEqual([
      'Dana -works at-> Acme',
      'Lena -sister of-> Dana',
      'Lena -married to-> Tom',
    ])
    expect(types('I work at Acme.', 'dana')).toEqual({ Dana: 'PERSON', Acme: 'COMPANY' })
    expect(edges('I work at Acme.')).toEqual([])
  })

  it('types entities from their names, their relations and the words around them', () => {
    expect(typeFromName('Acme Corp')).toBe('COMPANY')
    expect(typeFromName('Project Atlas')).toBe('PROJECT')
    expect(typeFromName('Web Summit')).toBe('EVENT')
    expect(typeFromName('Central Park')).toBe('PLACE')
    expect(types('Mel went to the Pride Parade with Caroline.')).toEqual({
      Mel: 'PERSON',
      'Pride Parade': 'EVENT',
      Caroline: 'PERSON',
    })
    expect(types('Dana uses Kubernetes.')).toMatchObject({ Kubernetes: 'TOOL' })
    expect(types('Painting is fun.')).toEqual({})
  })

  it('dates a change of state from the sentence, and other relations from the reference', () => {
    const [moved] = extractGraphOffline('Dana moved to Lisbon in March 2025.', { reference }).relations
    expect(moved?.validFrom?.toISOString()).toBe('2025-03-01T12:00:00.000Z')
    const [year] = extractGraphOffline('In 2023 Dana moved to Berlin.', { reference }).relations
    expect(year?.validFrom?.toISOString()).toBe('2023-01-01T00:00:00.000Z')
    const [works] = extractGraphOffline('Dana works at Acme.', {
      reference,
      validUntil: new Date('2026-01-01'),
    }).relations
    expect(works).toMatchObject({ validFrom: reference, validUntil: new Date('2026-01-01') })
    const [since] = extractGraphOffline('Dana has worked at Acme since 2019.', { reference }).relations
    expect(since?.validFrom?.toISOString()).toBe('2019-01-01T00:00:00.000Z')
    expect(eventDate('nothing dated here', reference)).toBeNull()
  })

  it('scales a relation’s confidence by the memory’s', () => {
    const [edge] = extractGraphOffline('Dana works at Acme.', { reference, confidence: 0.5 }).relations
    expect(edge?.confidence).toBe(0.4)
  })

  it('stays fast on long hostile text (every pattern runs on RE2)', () => {
    const text = `${'Dana '.repeat(2_000)}works at${' Acme'.repeat(2_000)}`
    const started = performance.now()
    extractGraphOffline(text, { reference })
    // Linear: a backtracking engine on this input takes minutes; generous for a loaded machine.
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})

describe('normalizeGraphAnswer', () => {
  it('keeps valid items, drops and counts the invalid ones, normalises relations and types', () => {
    const result = normalizeGraphAnswer({
      entities: [
        { name: 'Dana', type: 'person' },
        { name: 'Acme', type: 'COMPANY' },
        { name: 'Mars', type: 'PLANET' },
        { name: '', type: 'PERSON' },
        'nonsense',
      ],
      relations: [
        { source: 'dana', relation: 'Works  At', target: 'Acme', confidence: 0.9 },
        { source: 'Dana', relation: 'visits', target: 'Mars' },
        { source: 'Dana', relation: 'works at', target: 'Acme', confidence: 2 },
        { source: 'Dana', relation: 'works at', target: 'Acme', validFrom: 'last year' },
        { source: 'Dana', relation: 'works at', target: 'Acme' },
      ],
    })
    expect(result.entities).toEqual([
      { name: 'Dana', type: 'PERSON' },
      { name: 'Acme', type: 'COMPANY' },
    ])
    expect(result.relations).toEqual([
      {
        source: 'Dana',
        relation: 'works at',
        target: 'Acme',
        confidence: 0.9,
        validFrom: null,
        validUntil: null,
      },
    ])
    // Mars (type), '' (name), 'nonsense'; visits (unknown end), confidence 2, the bad date.
    expect(result.dropped).toBe(6)
  })
})
