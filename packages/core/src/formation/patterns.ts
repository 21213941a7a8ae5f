import type { MemoryCategory, MemoryEntryType } from '../memory/memory-item.ts'

/**
 * The pattern families of the offline extractor and router: which kind of memory a sentence holds,
 * if any. Rules are tried in order and the first that matches decides, so a correction that states
 * a preference ("I've changed my mind, I prefer light mode") is a correction, and a decision phrased
 * as a plan ("we'll use pnpm, final answer") is a decision. Each family's confidence is how often
 * its pattern names a memory a careful reader would keep; the extractor drops what is below its
 * `minConfidence`, so the weak families (a bare first-person statement) are the dial.
 */
export type Tier = 'working' | 'episodic' | 'semantic'

export interface SentenceKind {
  memoryType: MemoryEntryType
  category: MemoryCategory
  tier: Tier
  confidence: number
  /** The family that matched, for the router's reasons. */
  family: string
}

interface Family {
  family: string
  pattern: RegExp
  memoryType: MemoryEntryType
  category: MemoryCategory
  tier: Tier
  confidence: number
}

const FIRST_PERSON = /\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|we|we're|we've|we'll|our|us|let's)\b/
const SUBJECT_I = /(?:^|[,;:]\s*|\b(?:and|but|so|because|since|when|now|then)\s+)(?:i|we)\b/

const SECOND_PERSON = /\b(?:you|your|yours|you're|you've|you'll|ya)\b/
export const SECOND_PERSON_PENALTY = 0.15

/**
 * Chat drops the subject ("Lost my job yesterday", "Gonna continue my studies", "Love the colors"):
 * such a sentence is the speaker's, and "I" is put back so the families and the restatement see it.
 */
const ELIDED_SUBJECT =
  /^(?:gonna|wanna|going to|just|finally|lost|got|went|started|finished|had|made|took|bought|tried|visited)\b/i

export function restoreElidedSubject(sentence: string): string {
  return ELIDED_SUBJECT.test(sentence)
    ? `I ${sentence.charAt(0).toLowerCase()}${sentence.slice(1)}`
    : sentence
}

/** Reactions to the other speaker and conversational glue: said in the moment, remembered by no one. */
const CHIT_CHAT = [
  /^(?:hi|hey|hello|bye|thanks|thank you|wow|haha+|lol|ok|okay|sure|yes|yeah|yep|nope|no|great|awesome|cool|nice|congrats|congratulations|good (?:morning|night|luck|point)|oh|aww+|hmm+)\b[\s!.,]*(?:\w+[\s!.,]*)?$/,
  /\b(?:i'm|i am) (?:so |really |very )?(?:glad|happy|sorry|proud|excited|thrilled|stoked|impressed) (?:for|of|to hear|that you|you)\b/,
  /^i (?:totally |completely |really )?(?:agree|see what you mean|understand|bet|hope so|know,? right)\b/,
  /^i (?:think|guess|feel) (?:that's|it's|this is|so|you)\b/,
  /^(?:let me|i'll) (?:think|check|get back)\b/,
  // Showing a photo: the picture is not in the text, and the words alone say nothing lasting.
  /^(?:here's|here is|here are|check (?:it |this )?out|look at)\b/,
  /^(?:you|your|you're|you've|that's|that sounds|sounds|this is|it's|what a|how)\b/,
  // About the exchange, not the speaker: announcing news ("There's something I want to tell you"),
  // promising updates ("I'll keep you posted"), praising what the listener does ("I love how you
  // tell your stories").
  /\b(?:want|wanted|wanna|have|had|got) to (?:tell|show|ask) (?:you|ya)\b/,
  /\bkeep (?:you|ya) (?:posted|updated|in the loop)\b/,
  /^i (?:\w+ )?(?:love|like|admire|appreciate) (?:how|that|the way) (?:you|ya)\b/,
  // Catching up, with no news in the sentence itself: "Been a busy week since we talked", "A lot's
  // happened", "I just wanted to say hi" (the news, when there is some, is the next sentence).
  /\bsince (?:we|i) (?:last )?(?:spoke|talked|chatted|caught up|saw (?:you|each other))\b[\s!.]*$/,
  /^(?:i've |i have |we've |we have )?(?:had |been )?(?:a lot|so much|lots)(?:'s| has| of (?:things|stuff))? (?:going on|happening|happened|been going on)\b[\w\s]*[!.]*$/,
  /\b(?:want|wanted|wanna) to (?:say|drop (?:by|in) and say) (?:hi|hello|hey)\b/,
  // A collective exhortation or platitude, no event or fact of the speaker's: "Together we can make
  // a difference", "We can tackle life's challenges together", "We're all wonderfully imperfect"
  // ("We can finally move into the flat next month" is a plan: kept).
  /^together,? we (?:can|could)\b|^we (?:can|could)\b.*\btogether[\s!.]*$/,
  /^(?:we're|we are) all\b/,
  // Resolve with nothing resolved on: "I'm gonna keep it up", "I'll do my best", "I'll never forget
  // it", "I'll start thinking about what we can do".
  /\bkeep (?:it|that|this) up\b|\b(?:do|try) (?:my|our) (?:very )?best\b|\bnever forget (?:it|that|this)\b|\b(?:will|'ll|gonna|going to) start thinking about\b/,
]

// Order matters: see the module comment.
const FAMILIES: Family[] = [
  {
    family: 'correction',
    pattern:
      /^actually\b.*(?:\bnot\b|n't\b|\bno\b|\binstead\b|\bmoved\b|\bchanged\b|\bnow\b)|^(?:correction|sorry,? i meant|scratch that|that's wrong|i was wrong|no,? i said|not \w+,)|\b(?:no longer|not \w+ anymore|anymore,|i meant\b|changed my mind|used to (?:be|live|work)\b.*\bbut now|, not [\w.]+\.?$)/,
    memoryType: 'correction',
    category: 'correction',
    tier: 'semantic',
    confidence: 0.85,
  },
  {
    family: 'decision',
    pattern:
      /\b(?:i|we|team|they)(?:'ve| have)? (?:finally |just )?(?:decided|chose|picked|settled on|agreed)\b|\b(?:decided|made up my mind|final (?:call|answer))\b|\b(?:we're|we are|i'm|i am) going with\b|\blet's (?:go with|use|do|pick|stick with)\b/,
    memoryType: 'decision',
    category: 'decision',
    tier: 'episodic',
    confidence: 0.8,
  },
  {
    family: 'past conversation',
    pattern:
      /\b(?:last time we (?:talked|spoke|discussed)|as (?:we|i) (?:discussed|mentioned|said)|like i (?:told|said to) you|in our (?:previous|last) (?:chat|conversation|talk)|you mentioned)\b/,
    memoryType: 'fact',
    category: 'past_conversation',
    tier: 'episodic',
    confidence: 0.6,
  },
  {
    family: 'commitment',
    pattern:
      /\b(?:i|we)(?:'ll| will| shall)\b|\b(?:i'm|i am|we're|we are) (?:going to|gonna|planning|thinking (?:of|about)|about to|starting)\b|\b(?:i|we) (?:plan|intend|promise|want|hope|need|have|aim) to\b|\b(?:i|we) (?:gonna|wanna)\b|\bdon't forget that i\b/,
    memoryType: 'commitment',
    category: 'commitment',
    tier: 'episodic',
    confidence: 0.6,
  },
  {
    family: 'relationship',
    pattern:
      /\bmy (?:wife|husband|partner|spouse|son|daughter|kids?|children|mom|mum|mother|dad|father|parents|brother|sister|siblings|grand(?:ma|pa|mother|father|parents)|aunt|uncle|cousin|(?:best )?friends?|boyfriend|girlfriend|fianc[eé]e?|roommate|neighbou?r|boss|manager|mentor|colleagues?|co-?workers?|co-?founder|family)\b|\b(?:i'm|i am) married\b|\breports to\b|\b(?:i|we) (?:work|worked) (?:closely )?with\b|\bworks closely with\b|\bis (?:the|my) (?:tech )?(?:lead|owner|manager|head|founder|co-?founder)\b|\b(?:i|we) have (?:\w+ )?(?:kids|children|sons?|daughters?)\b|\b\w+ and i (?:used to|have been|are|were|met)\b|\bapproves\b/,
    memoryType: 'relationship',
    category: 'relationship',
    tier: 'semantic',
    confidence: 0.75,
  },
  {
    family: 'skill',
    pattern:
      /\bi (?:know how to|can (?:speak|read|play|code|write|bake|cook|draw|paint|sing|swim|drive|program))\b|\b(?:i'm|i am) (?:really |pretty |very )?(?:good|great|skilled|experienced|fluent|proficient|certified|an expert|a certified)\b|\bi speak\b|\b(?:i've|i have) been (?:\w+ing)\b.*\bfor (?:\w+ )*(?:years|months)\b|\b(?:i've|i have) been \w+ing since\b|\btaught myself\b|\bi trained as\b|\b(?:i've|i have) done \w+ for\b|\bi know \w+ well\b|\bexpert in\b|\bi (?:learned|learnt) (?:to|how)\b/,
    memoryType: 'skill',
    category: 'skill',
    tier: 'semantic',
    confidence: 0.75,
  },
  {
    family: 'preference',
    pattern:
      /\bi (?:\w+ )?(?:prefer|like|love|enjoy|hate|dislike|adore|can't stand|cherish|treasure|value)\b|\bfavou?rite\b|\bi'd rather\b|\b(?:i'm|i am) (?:a (?:big |huge )?fan of|not a fan of|into|passionate about)\b|\bi don't (?:like|enjoy|love)\b|\b(?:please )?always use\b|^answer in\b|\bhelps me (?:focus|relax|unwind)\b|\bis (?:so |really )?(?:calming|relaxing) for me\b/,
    memoryType: 'preference',
    category: 'preference',
    tier: 'semantic',
    confidence: 0.7,
  },
  {
    family: 'current context',
    pattern:
      /\b(?:currently|right now|at the moment|these days|this week)\b|\b(?:i'm|i am|we're|we are) (?:working on|in the middle of|preparing|writing|reading|training|debugging|focused)\b/,
    memoryType: 'fact',
    category: 'context',
    tier: 'episodic',
    confidence: 0.65,
  },
  {
    family: 'personal fact',
    pattern:
      /\bmy name is\b|\b(?:i'm|i am) (?:originally )?from\b|\bi live\b|\bi work (?:at|as|for|in)\b|\b(?:i'm|i am) (?:a|an) \w+|\b(?:i'm|i am) \d+\b|\bi (?:have|own|drive) (?:a|an|two|three|four|\d+)\b|\bmy \w+ (?:is|are)\b|\b(?:i'm|i am) (?:allergic|vegetarian|vegan|colou?rblind|left-handed|right-handed|single|divorced|retired|transgender|trans|gay|pregnant)\b|\bi studied\b|\bi don't (?:drink|smoke|eat)\b|\bour (?:company|team|stack|\w+ (?:is|are|uses|runs))\b|\bwe (?:use|run)\b/,
    memoryType: 'fact',
    category: 'fact',
    tier: 'semantic',
    confidence: 0.75,
  },
  {
    family: 'personal event',
    pattern:
      /\b(?:i|we|my \w+)(?:'ve| have)?(?: just| finally| recently| also| even)? (?:\w+ed|went|got|took|made|lost|won|ran|met|saw|began|bought|came|did|found|gave|had|heard|left|sold|spent|wrote|broke|built|drew|grew|became|threw|flew|swam|sang|taught)\b|\b(?:yesterday|last (?:week|weekend|month|year|night|summer|winter|spring|fall|friday|saturday|sunday|monday|tuesday|wednesday|thursday)|\w+ (?:days|weeks|months|years) ago)\b/,
    memoryType: 'fact',
    category: 'fact',
    tier: 'episodic',
    confidence: 0.65,
  },
]

/** A first-person statement no family names: kept only when the extractor is set to take weak evidence. */
const FIRST_PERSON_STATEMENT: Omit<Family, 'pattern'> = {
  family: 'first-person statement',
  memoryType: 'fact',
  category: 'fact',
  tier: 'episodic',
  confidence: 0.4,
}
/** A tool's output is a record of what happened (spec 002 scores it higher too). */
const TOOL_RESULT: Omit<Family, 'pattern'> = {
  family: 'tool result',
  memoryType: 'fact',
  category: 'fact',
  tier: 'episodic',
  confidence: 0.7,
}
/** A statement about someone else ("Alice is the tech lead"): only the relationship family applies in full. */
const THIRD_PERSON_STATEMENT: Omit<Family, 'pattern'> = {
  family: 'third-person statement',
  memoryType: 'fact',
  category: 'fact',
  tier: 'episodic',
  confidence: 0.35,
}

export function normaliseSentence(sentence: string): string {
  return sentence
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .toLowerCase()
    .trim()
}

/** Discourse openers that say nothing about the statement: "Thanks! Also, …", "Haha yes, …", "By the way, …". */
const OPENER =
  /^(?:(?:hey|hi|oh|ah|aww+|wow|haha+|lol|yes|yeah|yep|ok|okay|so|well|also|and|but|btw|by the way|anyway|thanks|honestly|sounds great|nice|cool)\b[\s,!.:-]*)+/i

/**
 * "Much has happened since we last spoke - I went…", "A lot's happened - I got…": the catching-up
 * clause before the news.
 */
const CATCHING_UP =
  /^(?:.{0,60}?\bsince we (?:last )?(?:spoke|talked|chatted|caught up)\b|(?:a lot|so much|lots)(?:'s|\u2019s| has)? (?:happened|been going on|going on))\s*(?:[-\u2013\u2014:,!.]\s*)+/i

export function stripOpeners(sentence: string): string {
  const stripped = sentence.replace(OPENER, '').replace(CATCHING_UP, '')
  return stripped.length > 0 ? stripped.charAt(0).toUpperCase() + stripped.slice(1) : sentence
}

export type SpeakerRole = 'user' | 'assistant' | 'tool' | 'system'

/**
 * The kind of memory one sentence holds, or null when it holds none (a question, a reaction, a
 * greeting). Questions hold none: "Do you like jazz?" says nothing about the asker.
 */
export function classifySentence(sentence: string, role: SpeakerRole = 'user'): SentenceKind | null {
  const text = normaliseSentence(stripOpeners(sentence))
  if (text.length === 0 || text.endsWith('?')) return null
  if (role === 'tool') return { ...TOOL_RESULT }
  if (CHIT_CHAT.some((pattern) => pattern.test(text))) return null
  const firstPerson = FIRST_PERSON.test(text)
  for (const family of FAMILIES) {
    if (!family.pattern.test(text)) continue
    // Most families are about the speaker; a third-person sentence matching them ("Ben approves the
    // invoices") is kept only for the families that are about others by nature.
    if (!firstPerson && family.memoryType !== 'relationship' && family.memoryType !== 'correction')
      return {
        ...THIRD_PERSON_STATEMENT,
        confidence: family.confidence - 0.25,
        family: `third-person ${family.family}`,
      }
    const { pattern: _pattern, ...kind } = family
    // Said to the listener ("I'll do my best to make you proud", "I love your painting"): more often
    // about the exchange than about the speaker, so worth less than the same words said plainly.
    if (SECOND_PERSON.test(text)) return { ...kind, confidence: kind.confidence - SECOND_PERSON_PENALTY }
    return kind
  }
  if (firstPerson && SUBJECT_I.test(text))
    return SECOND_PERSON.test(text)
      ? { ...FIRST_PERSON_STATEMENT, confidence: FIRST_PERSON_STATEMENT.confidence - SECOND_PERSON_PENALTY }
      : { ...FIRST_PERSON_STATEMENT }
  return { ...THIRD_PERSON_STATEMENT }
}
