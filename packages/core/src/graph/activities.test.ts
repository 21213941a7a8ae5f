import { describe, expect, it } from 'vitest'
import { ACTIVITY_RELATIONS } from './activities.ts'
import { extractGraphOffline } from './extract.ts'

const reference = new Date('2025-06-01T00:00:00Z')
const edges = (text: string, speaker: string | null = 'Melanie') =>
  extractGraphOffline(text, { reference, speaker }).relations.map(
    (r) => `${r.source} -${r.relation}-> ${r.target}`,
  )
const typeOf = (text: string, name: string) =>
  extractGraphOffline(text, { reference, speaker: 'Melanie' }).entities.find((e) => e.name === name)?.type

describe('activity relations: a person and a common-noun object', () => {
  it('reads each verb of the vocabulary onto its normalised relation', () => {
    const cases: [string, string][] = [
      ['Melanie attended an LGBTQ support group.', 'Melanie -attended-> LGBTQ support group'],
      ['Melanie participated in a charity race.', 'Melanie -attended-> charity race'],
      ['Melanie went to a pride parade last week.', 'Melanie -attended-> pride parade'],
      ['Melanie joined a mentorship program.', 'Melanie -joined-> mentorship program'],
      ['Melanie signed up for a pottery class.', 'Melanie -signed up for-> pottery class'],
      ['Melanie loves horses.', 'Melanie -likes-> horse'],
      ['Melanie is a big fan of pottery.', 'Melanie -likes-> pottery'],
      ['Melanie enjoys camping.', 'Melanie -likes-> camping'],
      ['Melanie plays the clarinet.', 'Melanie -plays-> clarinet'],
      ['Melanie has a husband and kids.', 'Melanie -has child-> kid'],
      ['Melanie has a guinea pig named Oscar.', 'Oscar -pet of-> Melanie'],
      ['Melanie visited the museum.', 'Melanie -visited-> museum'],
      ['Melanie took her kids to the park.', 'Melanie -visited-> park'],
      ['Melanie bought figurines.', 'Melanie -bought-> figurine'],
      ['Melanie got new running shoes.', 'Melanie -bought-> running shoe'],
      ['Melanie reads mystery novels.', 'Melanie -reads-> mystery novel'],
      ['Melanie is currently learning the piano.', 'Melanie -is learning-> piano'],
      ['Melanie works as a nurse.', 'Melanie -works as-> nurse'],
      [
        'Melanie volunteered with her family at a homeless shelter.',
        'Melanie -volunteers at-> homeless shelter',
      ],
      ['Melanie is planning an art show.', 'Melanie -plans-> art show'],
      ['Melanie is looking forward to attending a conference.', 'Melanie -plans-> conference'],
      ['Melanie went camping with her family.', 'Melanie -does-> camping'],
      ['Melanie painted a lake sunrise.', 'Melanie -made-> lake sunrise'],
    ]
    for (const [text, edge] of cases) expect(edges(text), text).toEqual([edge])
    const used = new Set(cases.map(([, edge]) => edge.split(' -')[1]?.split('->')[0]))
    for (const relation of ACTIVITY_RELATIONS) if (relation !== 'has pet') expect(used).toContain(relation)
  })

  it('drops determiners, possessives and praise, and lemmatises the head: one entity per thing', () => {
    expect(edges('Melanie signed up for pottery classes.')).toEqual([
      'Melanie -signed up for-> pottery class',
    ])
    expect(edges('Melanie signed up for her new pottery class.')).toEqual([
      'Melanie -signed up for-> pottery class',
    ])
    expect(edges('Melanie attended an LGBTQ+ counseling workshop.')).toEqual([
      'Melanie -attended-> LGBTQ+ counseling workshop',
    ])
    expect(edges('Melanie enjoys nature-inspired painting projects.')).toEqual([
      'Melanie -likes-> nature-inspired painting project',
    ])
    // Dates and examples end the phrase.
    expect(edges('Melanie took her kids to a pottery workshop last Friday.')).toEqual([
      'Melanie -attended-> pottery workshop',
    ])
    expect(edges('Melanie enjoys classical music like Bach.')).toEqual(['Melanie -likes-> classical music'])
  })

  it('reads the first person as the speaker, a list of objects, and a shared subject', () => {
    expect(edges('I just signed up for a pottery class yesterday.')).toEqual([
      'Melanie -signed up for-> pottery class',
    ])
    expect(edges('Melanie has a dog named Luna and a cat named Oliver.')).toEqual([
      'Luna -pet of-> Melanie',
      'Oliver -pet of-> Melanie',
    ])
    expect(edges('Melanie and her kids enjoy hiking.')).toEqual(['Melanie -likes-> hiking'])
    // A named object is the name ("called 'Rainbow Allies'"), not the kind of thing it is.
    expect(edges("Caroline joined a new activist group called 'Rainbow Allies'.", 'Caroline')).toEqual([
      'Caroline -joined-> Rainbow Allies',
    ])
  })

  it('types the object from its head, else from the relation', () => {
    expect(typeOf('Melanie went to the beach.', 'beach')).toBe('PLACE')
    expect(typeOf('Melanie signed up for a pottery class.', 'pottery class')).toBe('EVENT')
    expect(typeOf('Melanie plays the violin.', 'violin')).toBe('TOOL')
    expect(typeOf('Melanie loves horses.', 'horse')).toBe('CONCEPT')
  })

  it('says nothing of a question, a negation or a hypothetical', () => {
    expect(edges('Did Melanie attend the pottery class?')).toEqual([])
    expect(edges('Melanie attended the pottery class?')).toEqual([])
    expect(edges("I don't like horses.")).toEqual([])
    expect(edges('Melanie never attended the workshop.')).toEqual([])
    expect(edges("Melanie and her kids don't enjoy camping.")).toEqual([])
    expect(edges('If Melanie joins a book club, she will read more.')).toEqual([])
    expect(edges('Melanie would love a puppy.')).toEqual([])
    expect(edges('I wish I played the piano.')).toEqual([])
    expect(edges("I'm creating a library for when I have kids.")).toEqual([])
  })

  it('resolves "she" only when the text names one person, and never guesses a subject', () => {
    expect(edges('Melanie told me about her week. She attended a pottery workshop.', null)).toEqual([
      'Melanie -attended-> pottery workshop',
    ])
    expect(edges('Melanie met Caroline. She attended a pottery workshop.', null)).toEqual([])
    expect(edges('She attended a pottery workshop.', null)).toEqual([])
    expect(edges('They attended a pottery workshop.', null)).toEqual([])
    // A capitalised opener is not a person: "Stuff like this…".
    expect(edges('Stuff like this mural is great. Stuff enjoys murals.', null)).toEqual([])
    // "letting me join your journey": someone else's doing, and a vague object.
    expect(edges('Thanks for letting me join your art class.')).toEqual([])
  })

  it('keeps vague objects and objects of someone else out', () => {
    expect(edges('Melanie loves spending time with her kids.')).toEqual([])
    expect(edges('Melanie made a difference.')).toEqual([])
    expect(edges("Melanie celebrated her daughter's birthday.")).toEqual([])
    expect(edges('Melanie attended an adoption advice/assistance group.')).toEqual([])
  })

  it('reads "going to" as a plan, and dates events from the sentence', () => {
    expect(edges("I'm going to a transgender conference this month.")).toEqual([
      'Melanie -plans-> transgender conference',
    ])
    expect(edges('Melanie is going swimming with the kids.')).toEqual(['Melanie -plans-> swimming'])
    const [race] = extractGraphOffline('Melanie ran a charity race in March 2025.', {
      reference,
      speaker: 'Melanie',
    }).relations
    expect(race).toMatchObject({ relation: 'attended', confidence: 0.7 })
    expect(race?.validFrom?.toISOString()).toBe('2025-03-01T12:00:00.000Z')
    const [likes] = extractGraphOffline('Melanie loves horses.', { reference, speaker: 'Melanie' }).relations
    expect(likes?.validFrom).toEqual(reference)
  })

  it('keeps a relation between two names when a pattern found it', () => {
    expect(edges('Melanie has a dog named Luna.')).toEqual(['Luna -pet of-> Melanie'])
  })

  it('stays fast on long hostile text', () => {
    const text = `Melanie ${'and her kids '.repeat(2_000)}${'really '.repeat(2_000)}enjoy${' pottery'.repeat(2_000)}`
    const started = performance.now()
    extractGraphOffline(text, { reference, speaker: 'Melanie' })
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})
