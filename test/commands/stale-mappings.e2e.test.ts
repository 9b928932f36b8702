import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {baseCloud} from '../repairs/faults.js'
import {cloudctl} from '../support/cli.js'

// A cloud that never archived: one cell.instance-mapping-stale finding per cell, not per instance.
describe('cell.instance-mapping-stale is one finding per cell (built CLI)', () => {
  let dir: string
  let file: string
  const deleted: string[] = []

  beforeAll(async () => {
    const {b} = baseCloud(7)
    for (let i = 0; i < 12; i++) {
      const uuid = b.addInstance(i % 2 === 0 ? 'compute1' : 'compute2', 'm1.small').row.uuid
      b.deleteInstance(uuid, {at: `2023-0${1 + (i % 9)}-15 10:00:00`})
      deleted.push(uuid)
    }
    dir = mkdtempSync(join(tmpdir(), 'cloudctl-stale-'))
    file = join(dir, 'snap.json')
    await writeSnapshotFile(b.build(), file)
  })
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('counts, names the oldest deletion and the archive command; the uuids only in --json evidence', async () => {
    const j = await cloudctl(['audit', 'cells', '--snapshot', file, '--json'])
    const doc = JSON.parse(j.stdout) as {
      findings: Array<{
        code: string
        subject: Record<string, unknown>
        message: string
        repair: string
        evidence: {count: number; oldest_deleted_at: string; instance_uuids: string[]}
      }>
    }
    const stale = doc.findings.filter((f) => f.code === 'cell.instance-mapping-stale')
    const cells = new Set(stale.map((f) => f.subject.cell))
    expect(stale).toHaveLength(cells.size)
    expect(stale.reduce((n, f) => n + f.evidence.count, 0)).toBe(deleted.length)
    expect(stale.flatMap((f) => f.evidence.instance_uuids).sort()).toEqual([...deleted].sort())
    for (const f of stale) {
      expect(f.subject).not.toHaveProperty('instance_uuid')
      expect(f.evidence.oldest_deleted_at).toBe('2023-01-15')
      expect(f.repair).toMatch(/^nova-manage db archive_deleted_rows --before \d{4}-\d{2}-\d{2} --purge$/)
      expect(f.message).toContain(`${f.evidence.count} instance_mapping(s)`)
    }
    const human = await cloudctl(['audit', 'cells', '--snapshot', file])
    for (const u of deleted) expect(human.stdout).not.toContain(u)
  })
})
