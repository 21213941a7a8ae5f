import type { NextConfig } from 'next'

const config: NextConfig = {
  poweredByHeader: false,
  reactStrictMode: true,
  // The dashboard talks to the API server-side; nothing is fetched from other hosts.
  images: { unoptimized: true },
}

export default config
