import {createServer} from 'node:net'

/** A loopback TCP port nothing listens on now, for a server a test starts of its own. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address()
      srv.close(() => (typeof a === 'object' && a !== null ? resolve(a.port) : reject(new Error('no port'))))
    })
  })
}
