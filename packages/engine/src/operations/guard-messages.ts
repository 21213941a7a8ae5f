import type { Metadata } from '@engram/core'
import type { PrivacyService } from '../privacy/privacy-service.ts'

export interface GuardedMessage {
  content: string
  speaker: string | null | undefined
  metadata: Metadata | null | undefined
}

/**
 * Puts what messages say through the agent's privacy policy in one pass: each content, each
 * speaker given (a name can be an e-mail address) and each metadata object, which is also where an
 * omitted speaker is taken from. `fieldOf` names a message in the errors (`messages.3`).
 */
export async function guardMessages(
  privacy: Pick<PrivacyService, 'guard'>,
  scope: string,
  messages: readonly { content: string; speaker?: string | null; metadata?: Metadata | null }[],
  fieldOf: (index: number) => string,
): Promise<GuardedMessage[]> {
  const texts: { field: string; text: string }[] = []
  const speakerAt = new Map<number, number>()
  for (const [i, m] of messages.entries()) texts.push({ field: `${fieldOf(i)}.content`, text: m.content })
  for (const [i, m] of messages.entries()) {
    if (m.speaker == null) continue
    speakerAt.set(i, texts.length)
    texts.push({ field: `${fieldOf(i)}.speaker`, text: m.speaker })
  }
  const guarded = await privacy.guard(
    scope,
    texts,
    messages.map((m, i) => ({ field: `${fieldOf(i)}.metadata`, value: m.metadata })),
  )
  return messages.map((m, i) => {
    const at = speakerAt.get(i)
    return {
      content: guarded.texts[i] as string,
      speaker: at === undefined ? m.speaker : guarded.texts[at],
      metadata: guarded.metadata[i],
    }
  })
}
