import { adminKey, gql } from '../../../lib/api'
import { CreateKeyForm, KeyList, type KeyRow } from './keys-console'

export const dynamic = 'force-dynamic'

export default async function KeysPage() {
  const { apiKeys } = await gql<{ apiKeys: { data: KeyRow[] } }>(
    `{ apiKeys { ... on QueryApiKeysSuccess { data { id agentId role label keyPrefix createdAt revokedAt } } } }`,
  )
  // The key list shows prefixes only; the signed-in key is the admin key whose prefix starts it.
  const signedIn = await adminKey()
  const signedInKeyId =
    apiKeys.data.find((k) => k.role === 'ADMIN' && !k.revokedAt && signedIn.startsWith(k.keyPrefix))?.id ??
    null
  return (
    <section aria-labelledby="keys-heading">
      <header className="page-header">
        <h1 id="keys-heading">API keys</h1>
      </header>
      <CreateKeyForm />
      {apiKeys.data.length === 0 ? (
        <p className="empty">No keys yet.</p>
      ) : (
        <KeyList keys={apiKeys.data} renderedAt={new Date().toISOString()} signedInKeyId={signedInKeyId} />
      )}
    </section>
  )
}
