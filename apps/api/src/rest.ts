import { EngramError, NotFoundError, ValidationError } from '@engram/core'
import type { Plugin } from 'graphql-yoga'
import { bearerToken, resolveViewer, scopeFor } from './auth.ts'
import type { Services } from './services/services.ts'

/** Spec 000's efficiency report, at the path the spec documents. */
export const OPTIMIZER_STATUS_PATH = '/learning/optimizer/status'

const STATUS_BY_CODE: Record<string, number> = { VALIDATION: 400, FORBIDDEN: 403, NOT_FOUND: 404 }

/**
 * `GET /learning/optimizer/status`: the report spec 000 shows, in its JSON shape, for the agent
 * of the key (an admin key names one with `?agentId=`). The same numbers as GraphQL's
 * optimizerStatus, which this reads through the same service; errors carry the GraphQL door's
 * codes so a client handles both alike.
 */
export function optimizerStatusRoute(services: Services): Plugin {
  return {
    async onRequest({ url, request, endResponse, fetchAPI }) {
      if (url.pathname !== OPTIMIZER_STATUS_PATH) return
      const reply = (status: number, body: unknown, headers: Record<string, string> = {}) =>
        endResponse(
          new fetchAPI.Response(JSON.stringify(body), {
            status,
            headers: { 'content-type': 'application/json', ...headers },
          }),
        )
      const error = (status: number, code: string, message: string, extra: object = {}) =>
        reply(status, { error: { code, message, ...extra } }, status === 405 ? { allow: 'GET' } : {})

      if (request.method !== 'GET') return error(405, 'METHOD_NOT_ALLOWED', 'only GET is served here')
      const viewer = await resolveViewer(
        services.agents,
        bearerToken(request.headers.get('authorization')),
        services.liveTokens,
      )
      if (!viewer)
        return error(
          401,
          'UNAUTHENTICATED',
          'Missing or invalid API key: send "Authorization: Bearer <key>".',
        )
      try {
        const scope = scopeFor(viewer, url.searchParams.get('agentId'))
        if (viewer.kind === 'admin') await services.agents.requireAgent(scope)
        const status = await services.optimizer.status(scope)
        return reply(200, {
          totalOptimizations: status.totalOptimizations,
          totalTokensSaved: status.totalTokensSaved,
          avgSavingsPerRun: status.avgSavingsPerRun,
          currentParameters: {
            compressionTrigger: status.currentParameters.compressionTrigger,
            fullMessageWindow: status.currentParameters.fullMessageWindow,
            minRelevance: status.currentParameters.minRelevance,
            targetUsageRatio: status.currentParameters.targetUsageRatio,
          },
        })
      } catch (caught) {
        if (!(caught instanceof EngramError)) throw caught
        return error(STATUS_BY_CODE[caught.code] ?? 400, caught.code, caught.message, {
          ...(caught instanceof ValidationError ? { issues: caught.issues } : {}),
          ...(caught instanceof NotFoundError ? { resource: caught.resource, id: caught.id } : {}),
        })
      }
    },
  }
}
