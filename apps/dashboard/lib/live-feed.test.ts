import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import WebSocket, { WebSocketServer } from 'ws'
import { closingSafe, type LiveStatus, openLiveFeed } from './live-feed'

/** A graphql-transport-ws server small enough to script: it records what each socket did. */
function scriptedServer() {
  const server = new WebSocketServer({ port: 0, handleProtocols: () => 'graphql-transport-ws' })
  const closes: number[] = []
  const inits: unknown[] = []
  let connected: (socket: WebSocket) => void = () => {}
  const sockets: WebSocket[] = []
  server.on('connection', (socket) => {
    sockets.push(socket)
    connected(socket)
    socket.on('close', (code) => closes.push(code))
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; id?: string; payload?: unknown }
      if (message.type === 'connection_init') {
        inits.push(message.payload)
        socket.send(JSON.stringify({ type: 'connection_ack' }))
      }
      if (message.type === 'subscribe') {
        socket.send(JSON.stringify({ type: 'next', id: message.id, payload: { data: { tick: 1 } } }))
      }
    })
  })
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`
  const nextSocket = () => new Promise<WebSocket>((resolve) => (connected = resolve))
  return { server, url, closes, inits, sockets, nextSocket }
}

function deferred<T>() {
  let resolve: (value: T) => void = () => {}
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5))
  expect(check()).toBe(true)
}

describe('openLiveFeed', () => {
  let rig: ReturnType<typeof scriptedServer>
  const rejections: unknown[] = []
  const onRejection = (reason: unknown) => rejections.push(reason)
  beforeEach(() => {
    rig = scriptedServer()
    rejections.length = 0
    process.on('unhandledRejection', onRejection)
  })
  afterEach(async () => {
    process.off('unhandledRejection', onRejection)
    await new Promise((r) => rig.server.close(r))
  })

  it('delivers data with the token in the connection message and closes the socket normally', async () => {
    const data: unknown[] = []
    const statuses: LiveStatus[] = []
    const close = openLiveFeed<{ tick: number }>({
      query: 'subscription { tick }',
      variables: {},
      fetchToken: async () => ({ token: 't1', url: rig.url }),
      onData: (value) => data.push(value),
      onStatus: (status) => statuses.push(status),
      webSocketImpl: WebSocket,
    })
    await until(() => data.length === 1)
    expect(data).toEqual([{ tick: 1 }])
    expect(rig.inits).toEqual([{ authorization: 'Bearer t1' }])
    expect(statuses).toContain('live')
    close()
    await until(() => rig.closes.length === 1)
    expect(rig.closes).toEqual([1000])
  })

  it('closed while its token is on its way: closes the socket itself and throws nothing into the page', async () => {
    const secondToken = deferred<{ token: string; url: string }>()
    let calls = 0
    const opened = rig.nextSocket()
    const close = openLiveFeed({
      query: 'subscription { tick }',
      variables: {},
      // The first token gives the URL; the second is fetched for the connection message.
      fetchToken: () =>
        ++calls === 1 ? Promise.resolve({ token: 't1', url: rig.url }) : secondToken.promise,
      onData: () => {},
      onStatus: () => {},
      webSocketImpl: WebSocket,
    })
    await opened
    close()
    secondToken.resolve({ token: 't2', url: rig.url })
    // graphql-ws's dispose() rejects with the CloseEvent of the refused connection; that must
    // not become an unhandled rejection (the dashboard's "pageerror: CloseEvent").
    await until(() => rig.closes.length === 1)
    await new Promise((r) => setTimeout(r, 50))
    expect(rig.inits).toEqual([])
    expect(rig.closes).toEqual([4005])
    expect(rejections).toEqual([])
  })

  it('a server that closes a feed still connecting, after it was let go, throws nothing into the page', async () => {
    const secondToken = deferred<{ token: string; url: string }>()
    let calls = 0
    const opened = rig.nextSocket()
    const close = openLiveFeed({
      query: 'subscription { tick }',
      variables: {},
      fetchToken: () =>
        ++calls === 1 ? Promise.resolve({ token: 't1', url: rig.url }) : secondToken.promise,
      onData: () => {},
      onStatus: () => {},
      webSocketImpl: WebSocket,
    })
    const socket = await opened
    close()
    // The server's connection-init timeout fires before the token arrives.
    socket.close(4408, 'Connection initialisation timeout')
    await until(() => rig.closes.length === 1)
    secondToken.resolve({ token: 't2', url: rig.url })
    await new Promise((r) => setTimeout(r, 50))
    expect(rejections).toEqual([])
    expect(rig.sockets).toHaveLength(1)
  })
})

describe('closingSafe', () => {
  /** A socket class that records what it was asked to send. */
  class RecordingSocket {
    static OPEN = 1
    readyState = 0
    sent: string[] = []
    send(data: string) {
      this.sent.push(data)
    }
  }

  it('sends while the socket is open and drops what would go out once it is closing or closed', () => {
    const Safe = closingSafe(RecordingSocket)
    const socket = new Safe()
    socket.readyState = 1
    socket.send('while open')
    socket.readyState = 2
    socket.send('while closing')
    socket.readyState = 3
    socket.send('once closed')
    expect(socket.sent).toEqual(['while open'])
  })
})
