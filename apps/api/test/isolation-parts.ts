/**
 * Root fields whose isolation cases live in a part's own file (issue 17 onwards:
 * `isolation-<part>.test.ts`), so one part's fixtures do not crowd this suite. Each such file
 * asserts that its cases cover exactly the fields it lists here; the meta-test in
 * isolation.test.ts counts them as covered.
 */
export const ISOLATION_PARTS: Record<string, readonly string[]> = {
  maintenance: [
    'maintenanceStatus',
    'maintenanceRuns',
    'maintenanceSettings',
    'runMaintenance',
    'updateMaintenanceSettings',
  ],
  pools: [
    'pools',
    'pool',
    'poolMemories',
    'queryPool',
    'contributeToPool',
    'removePoolMemory',
    'syncPoolToAgent',
    'createPool',
    'updatePool',
    'deletePool',
    'addPoolMember',
    'removePoolMember',
  ],
  metrics: ['serverMetrics'],
  'working-context': [
    'workingContext',
    'recentMemory',
    'appendWorkingContext',
    'setWorkingScratchpad',
    'recordToolResult',
    'flushWorkingContext',
    'clearWorkingContext',
  ],
}

/** Every root field a part file covers. */
export const partCoveredFields = (): Set<string> => new Set(Object.values(ISOLATION_PARTS).flat())
