/**
 * The cell's database identity (CellInfo.identity, recorded at capture) survives every snapshot
 * layout, and files written before it existed still load.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {readSnapshotFile, writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {CloudBuilder} from '../support/builders.js'

function snap() {
  const b = new CloudBuilder({seed: 2517, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 512, root_gb: 1})
  b.addHost('cell1', {host: 'cmp1', vcpus: 8, memory_mb: 8192, local_gb: 100})
  b.addInstance('cmp1', 'm1.small')
  return b.build()
}

describe('snapshot files: cells[].identity', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cloudctl-identity-'))
  for (const name of ['s.json', 's.json.gz', 's.yaml', 's.cloudctl']) {
    it(`${name}: written and read back as recorded; absent stays absent`, async () => {
      const s = snap()
      s.cells[1].identity = {address: 'db1:3306/nova_cell1', database: 'nova_cell1', hostname: 'db1', port: 3306, server_id: 7, server_uuid: null}
      await writeSnapshotFile(s, join(dir, name))
      const back = await readSnapshotFile(join(dir, name))
      expect(back.cells[1].identity).toEqual(s.cells[1].identity)
      expect('identity' in back.cells[0]).toBe(false)
    })
  }

  it('an identity that is not an object is a malformed snapshot', async () => {
    const s = snap() as unknown as {cells: Array<Record<string, unknown>>}
    s.cells[1].identity = 'db1'
    await writeSnapshotFile(s as never, join(dir, 'bad.json'))
    await expect(readSnapshotFile(join(dir, 'bad.json'))).rejects.toThrow(/identity/)
  })
})
