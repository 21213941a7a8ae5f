# One image for the API and the dashboard (docker-compose.yml runs it as both). Node 20 as in
# development; the native modules (better-sqlite3, hnswlib-node) build with python3/make/g++ when
# no prebuilt binary matches.
FROM node:20-bookworm-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
  && rm -rf /var/lib/apt/lists/* \
  && npm install -g pnpm@10.34.9
WORKDIR /app
COPY . .
RUN pnpm install --frozen-lockfile \
  && pnpm --filter @engram/api generate \
  && pnpm --filter @engram/dashboard build
ENV NODE_ENV=production
EXPOSE 4000 3000
CMD ["pnpm", "--filter", "@engram/api", "start"]
