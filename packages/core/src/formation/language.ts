import model from 'wink-eng-lite-web-model'
import winkNLP, { type ItemSentence, type WinkMethods } from 'wink-nlp'

/**
 * The NLP package behind the offline extractor: wink-nlp with its light English model, chosen over
 * compromise on LoCoMo's turns (docs/memory-formation.md): ~13x faster warm, 92% of the dates
 * against 39%, and its part-of-speech tags find 92% of the proper names the observations repeat
 * (compromise's typed people/places/organisations: 75%). The model is a JavaScript module: no file
 * or network access, and the same text always gives the same analysis.
 */
export interface AnalysedSentence {
  text: string
  /** Runs of proper nouns ("Door Dash", "Lena"), in order, without duplicates. */
  properNouns: string[]
  /** Date and time phrases wink finds ("last week", "3 May 2023", "tomorrow"). */
  dates: string[]
  /** Common and proper nouns, lower case, in order, without duplicates ("internship", "company"). */
  nouns: string[]
}

const NOUN_TAGS = new Set(['NOUN', 'PROPN'])

const DATE_ENTITY_TYPES = new Set(['DATE', 'TIME', 'DURATION'])

let engine: WinkMethods | undefined
// Built on first use: loading the model takes ~0.5 s, which a process that never extracts should not pay.
// Shared with the graph's extractor (graph/extract.ts): one model in memory.
export function englishNlp(): WinkMethods {
  engine ??= winkNLP(model, ['sbd', 'pos', 'ner'])
  return engine
}

export function analyseText(text: string): AnalysedSentence[] {
  const wink = englishNlp()
  const its = wink.its
  const sentences: AnalysedSentence[] = []
  wink
    .readDoc(text)
    .sentences()
    .each((sentence: ItemSentence) => {
      const words = sentence.tokens().out() as string[]
      const tags = sentence.tokens().out(its.pos) as string[]
      const properNouns: string[] = []
      let run: string[] = []
      const flush = () => {
        const name = run.join(' ')
        if (name.length > 1 && !properNouns.includes(name)) properNouns.push(name)
        run = []
      }
      for (const [index, word] of words.entries()) {
        // "I" is tagged PRON, but a capitalised sentence-initial word can be tagged PROPN: keep only
        // capitalised words, so "Painting is fun" does not make "Painting" a name.
        if (tags[index] === 'PROPN' && /^[A-Z][\p{L}\p{N}-]*$/u.test(word) && word !== 'I' && index > 0)
          run.push(word)
        else flush()
      }
      flush()
      const nouns = [
        ...new Set(
          words
            .filter(
              (word, index) => NOUN_TAGS.has(tags[index] as string) && /^[\p{L}][\p{L}\p{N}-]+$/u.test(word),
            )
            .map((word) => word.toLowerCase()),
        ),
      ]
      const entities = sentence.entities().out(its.detail) as unknown as { value: string; type: string }[]
      sentences.push({
        text: (sentence.out() as string).trim(),
        properNouns,
        nouns,
        dates: entities.filter((entity) => DATE_ENTITY_TYPES.has(entity.type)).map((entity) => entity.value),
      })
    })
  return sentences.filter((sentence) => sentence.text.length > 0)
}
