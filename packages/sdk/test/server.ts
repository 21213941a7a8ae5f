import { listen, type RunningServer } from '../../../apps/api/src/server.ts'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from '../../../apps/api/test/helpers.ts'

export { ADMIN_KEY }

/** A real API server on its own SQLite file, on a port of its own (0: the system picks). */
export async function startServer(): Promise<{
  t: TestApp
  running: RunningServer
  url: string
  agentKey(agentId: string): Promise<string>
  close(): Promise<void>
}> {
  const t = await createTestApp()
  const running = await listen(t.app, 0, '127.0.0.1')
  return {
    t,
    running,
    url: `http://127.0.0.1:${running.port}`,
    agentKey: (agentId) => createAgentKey(t, agentId),
    async close() {
      await running.close()
      await t.close()
    },
  }
}
