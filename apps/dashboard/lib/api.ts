/** Where the API is: ENGRAM_API_URL, or the local API on its configured port. */
export function apiBaseUrl(): string {
  return (process.env.ENGRAM_API_URL ?? `http://127.0.0.1:${process.env.API_PORT ?? 4000}`).replace(/\/$/, '')
}

export interface ApiHealth {
  status: string
  version: string
  database: string
}

export type HealthResult =
  | { reachable: true; health: ApiHealth }
  | { reachable: false; url: string; reason: string }

export async function fetchHealth(): Promise<HealthResult> {
  const url = `${apiBaseUrl()}/health`
  try {
    const response = await fetch(url, { cache: 'no-store', signal: AbortSignal.timeout(3_000) })
    return { reachable: true, health: (await response.json()) as ApiHealth }
  } catch (error) {
    return { reachable: false, url, reason: error instanceof Error ? error.message : String(error) }
  }
}
