// Runs WAL checkpoints for the server on a thread of its own (see checkpointer.ts). Plain
// JavaScript: a worker thread loads it without the TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'

const connection = new Database(workerData.file)
connection.pragma('busy_timeout = 1000')
const timer = setInterval(() => {
  try {
    // PASSIVE: copies what no reader still needs and never waits for or blocks anyone.
    connection.pragma('wal_checkpoint(PASSIVE)')
  } catch {
    // Busy or locked this time: the next tick tries again, and SQLite's own auto-checkpoint stays on.
  }
}, workerData.intervalMs)
parentPort.on('message', (message) => {
  if (message !== 'stop') return
  clearInterval(timer)
  connection.close()
  parentPort.close()
})
