import type { Engine } from '../engine.ts'
import type { ServerMetricsSample } from '../ports/server-metrics.ts'
import type { OperationHandlers } from './handlers.ts'

// The server's metrics (issue 17 §3); the catalog marks it admin, so an agent key never gets here.
export type MetricsHandlerName = 'serverMetrics'

const sampleOut = (sample: ServerMetricsSample) => ({ ...sample, at: sample.at.toISOString() })

export function metricsHandlers(engine: Engine): Pick<OperationHandlers, MetricsHandlerName> {
  return {
    async serverMetrics(_call, input) {
      const report = await engine.serverMetrics.read(
        input.windowSeconds === undefined ? undefined : input.windowSeconds * 1000,
      )
      const samples = report.samples.map(sampleOut)
      return { ...report, samples, current: samples.at(-1) ?? null }
    },
  }
}
