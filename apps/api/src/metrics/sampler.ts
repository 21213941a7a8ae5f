import { type Clock, intervalRates, type MetricsRules, SampleRing } from '@engram/core'
import {
  type Logger,
  repeat,
  type ServerMetricsReport,
  type ServerMetricsSample,
  type ServerMetricsSource,
  schedulerOf,
} from '@engram/engine'
import type { MetricsRegistry } from './registry.ts'
import type { StoreFigures } from './store-gauges.ts'

/** A ring entry: the sample, and the counters' reading the next sample's rates start from. */
interface Entry {
  at: number
  sample: ServerMetricsSample
  reading: Awaited<ReturnType<MetricsRegistry['reading']>>
}

/**
 * The server-side ring behind the admin query serverMetrics: every `sampleIntervalMs` a sample of
 * the headline series (rates from the registry's counters since the previous sample, the store's
 * figures now), kept for `windowMs`. `sample()` is what tests call after moving the clock; the
 * timer `start()` sets only calls it.
 */
export class MetricsSampler implements ServerMetricsSource {
  private readonly ring: SampleRing<Entry>
  /** Cancels the sampling timer (null while not started). */
  private timer: (() => void) | null = null
  private sampling: Promise<ServerMetricsSample> | null = null

  constructor(
    private readonly metrics: MetricsRegistry,
    private readonly figures: () => Promise<StoreFigures>,
    private readonly clock: Clock,
    private readonly rules: MetricsRules,
    private readonly log: Logger,
  ) {
    this.ring = new SampleRing(rules)
  }

  /** Takes one sample now (a sample already being taken is shared, not taken twice). */
  sample(): Promise<ServerMetricsSample> {
    this.sampling ??= this.take().finally(() => {
      this.sampling = null
    })
    return this.sampling
  }

  private async take(): Promise<ServerMetricsSample> {
    const at = this.clock.now()
    const reading = await this.metrics.reading(at.getTime())
    const rates = intervalRates(this.ring.latest?.reading ?? null, reading)
    const figures = await this.figures()
    const sample: ServerMetricsSample = {
      at,
      ...rates,
      queueDepth: figures.jobs,
      embeddingBacklog: figures.embeddingBacklog,
      counts: figures.counts,
      databaseBytes: figures.databaseBytes,
    }
    this.ring.push({ at: at.getTime(), sample, reading })
    return sample
  }

  async read(windowMs?: number): Promise<ServerMetricsReport> {
    const since = this.clock.now().getTime() - (windowMs ?? this.rules.windowMs)
    return {
      sampleIntervalMs: this.rules.sampleIntervalMs,
      windowMs: this.rules.windowMs,
      samples: this.ring.since(since).map((entry) => entry.sample),
    }
  }

  /** Samples on a timer (the server's: the clock's scheduler); tests call sample() instead. */
  start(): void {
    if (this.timer) return
    this.timer = repeat(schedulerOf(this.clock), this.rules.sampleIntervalMs, () => {
      this.sample().catch((error) => this.log.warn('[metrics] sampling failed:', error))
    })
  }

  async stop(): Promise<void> {
    this.timer?.()
    this.timer = null
    await this.sampling?.catch(() => {})
  }
}
