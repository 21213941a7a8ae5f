/**
 * A run's domain: the host a URL names ("www.example.com", "localhost:5173"), lowercased, or the
 * name an orchestrator gives when there is no URL (a repository, a tool). Memory is kept per domain.
 */
export function normalizeRunDomain(input: string): string {
  const trimmed = input.trim()
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    try {
      const host = new URL(trimmed).host.toLowerCase()
      if (host.length > 0) return host
    } catch {
      // Not a URL after all: keep the text as the domain's name.
    }
  }
  return trimmed.toLowerCase()
}

/** The domain of a URL, or null when the text is not an absolute URL with a host. */
export function domainOfUrl(url: string): string | null {
  try {
    const host = new URL(url).host.toLowerCase()
    return host.length > 0 ? host : null
  } catch {
    return null
  }
}

/**
 * The documented system's directory name for a domain (`.agent-memory/domains/<name>/`):
 * characters other than letters, digits, "." and "-" become "_" ("localhost:5173" → "localhost_5173").
 */
export function domainDirectoryName(domain: string): string {
  const name = domain.replace(/[^a-zA-Z0-9.-]/g, '_').slice(0, 200)
  return name.length > 0 ? name : 'unknown'
}
