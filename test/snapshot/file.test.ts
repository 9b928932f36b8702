import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {gzipSync} from 'node:zlib'

import {describe, expect, it} from 'vitest'

import {CELL0_UUID, emptySnapshot, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {SnapshotFormatError} from '../../src/lib/errors.js'
import {readSnapshotFile, writeSnapshotFile} from '../../src/lib/snapshot/file.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-file-'))

function sample(): Snapshot {
  const s = emptySnapshot({kind: 'live', description: 'mysql://nova:hunter2@db1:3306/nova_api'}, '2026-11-22T10:00:00.000Z')
  s.cells.push(
    {id: 1, uuid: CELL0_UUID, name: 'cell0', database_connection: 'mysql+pymysql://nova:hunter2@db1/nova_cell0', transport_url: 'none:/', disabled: false, is_cell0: true, status: 'available'},
    {id: 2, uuid: 'c1', name: 'cell1', database_connection: 'mysql+pymysql://nova:hunter2@db2/nova', transport_url: 'rabbit://openstack:hunter2@mq1:5672/', disabled: false, is_cell0: false, status: 'unavailable', error: 'connect ECONNREFUSED'},
  )
  s.nova_api.flavors.push({id: 1, flavorid: '1', name: 'm1.tiny', memory_mb: 512, vcpus: 1, swap: 0, root_gb: 1, ephemeral_gb: 0, rxtx_factor: 1, vcpu_weight: null, disabled: false, is_public: true, description: null, extra_specs: {'hw:cpu_policy': 'dedicated'}})
  s.placement.resource_providers.push({id: 1, uuid: 'rp-1', name: 'cmp1', generation: 3, root_provider_id: 1, parent_provider_id: null})
  s.placement.inventories.push({id: 1, resource_provider_id: 1, resource_class_id: 0, total: 16, reserved: 0, min_unit: 1, max_unit: 16, step_size: 1, allocation_ratio: 0.8999999761581421})
  for (let i = 0; i < 5; i++) s.placement.allocations.push({id: i + 1, resource_provider_id: 1, consumer_id: `c-${i}`, resource_class_id: 0, used: 1})
  s.nova.services.push({cell_uuid: CELL0_UUID, id: 1, uuid: 's1', host: 'cmp1', binary: 'nova-compute', topic: 'compute', report_count: 3, disabled: false, disabled_reason: null, forced_down: false, last_seen_up: '2026-11-22 09:59:50', version: 61, deleted: 0, deleted_at: null, created_at: null, updated_at: null})
  return s
}

describe('snapshot files', () => {
  it.each(['snap.json', 'snap.json.gz', 'snap.yaml', 'snap.yml.gz'])('round-trips %s and redacts every password', async (name) => {
    const path = join(dir, name)
    await writeSnapshotFile(sample(), path)
    const back = await readSnapshotFile(path)
    const want = sample()
    expect(back.placement).toEqual(want.placement)
    expect(back.nova).toEqual(want.nova)
    expect(back.nova_api).toEqual(want.nova_api)
    expect(back.cells.map((c) => c.database_connection)).toEqual(['mysql+pymysql://nova:***@db1/nova_cell0', 'mysql+pymysql://nova:***@db2/nova'])
    expect(back.cells[1].transport_url).toBe('rabbit://openstack:***@mq1:5672/')
    expect(back.cells[1].status).toBe('unavailable')
    expect(back.source.description).toBe('mysql://nova:***@db1:3306/nova_api')
    const raw = name.endsWith('.gz') ? '' : readFileSync(path, 'utf8')
    expect(raw).not.toContain('hunter2')
  })

  it('writes JSON with one row per line, so large clouds stream', async () => {
    const path = join(dir, 'lines.json')
    await writeSnapshotFile(sample(), path)
    const lines = readFileSync(path, 'utf8').split('\n')
    expect(lines.filter((l) => l.startsWith('{"id":') && l.includes('"consumer_id"'))).toHaveLength(5)
    expect(() => JSON.parse(readFileSync(path, 'utf8'))).not.toThrow()
  })

  it('accepts any valid JSON layout, e.g. pretty-printed', async () => {
    const path = join(dir, 'pretty.json')
    writeFileSync(path, JSON.stringify(sample(), null, 2))
    const back = await readSnapshotFile(path)
    expect(back.placement.allocations).toHaveLength(5)
  })

  it('reports a truncated file with the table it stopped in', async () => {
    const path = join(dir, 'trunc.json')
    await writeSnapshotFile(sample(), path)
    const text = readFileSync(path, 'utf8')
    writeFileSync(path, text.slice(0, text.indexOf('"consumer_id":"c-3"')).split('\n').slice(0, -1).join('\n'))
    await expect(readSnapshotFile(path)).rejects.toThrow(/truncated.*inside table allocations after 3 rows/)
  })

  it('reports a truncated gzip stream', async () => {
    const path = join(dir, 'trunc.json.gz')
    const gz = gzipSync(Buffer.from(JSON.stringify(sample())))
    writeFileSync(path, gz.subarray(0, gz.length - 20))
    await expect(readSnapshotFile(path)).rejects.toBeInstanceOf(SnapshotFormatError)
  })

  it('names the table, row and column of a malformed row', async () => {
    const s = sample() as unknown as {placement: {allocations: Array<Record<string, unknown>>}}
    s.placement.allocations[2].used = 'three'
    const path = join(dir, 'bad-row.json')
    writeFileSync(path, JSON.stringify(s))
    await expect(readSnapshotFile(path)).rejects.toThrow(/placement\.allocations\[2\] column "used" is not an integer/)
  })

  it('rejects invalid JSON and documents that are not snapshots', async () => {
    const bad = join(dir, 'bad.json')
    writeFileSync(bad, '{"format_version": 1, "cells": [')
    await expect(readSnapshotFile(bad)).rejects.toThrow(/not valid JSON/)
    const other = join(dir, 'other.yaml')
    writeFileSync(other, 'kind: Deployment\n')
    await expect(readSnapshotFile(other)).rejects.toThrow(/format_version is missing/)
    await expect(readSnapshotFile(join(dir, 'nope.json'))).rejects.toThrow(/does not exist/)
  })
})
