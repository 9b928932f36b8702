import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {gzipSync} from 'node:zlib'

import {afterAll, describe, expect, it} from 'vitest'

import {CELL0_UUID, emptySnapshot, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {SnapshotFormatError} from '../../src/lib/errors.js'
import {parseSnapshotText, readSnapshotFile, writeSnapshotFile} from '../../src/lib/snapshot/file.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-file-'))
// Some files here are megabytes: do not leave them behind.
afterAll(() => rmSync(dir, {recursive: true, force: true}))

function sample(): Snapshot {
  const s = emptySnapshot({kind: 'live', description: 'mysql://nova:hunter2@db1:3306/nova_api'}, '2026-11-22T10:00:00.000Z')
  s.cells.push(
    {
      id: 1,
      uuid: CELL0_UUID,
      name: 'cell0',
      database_connection: 'mysql+pymysql://nova:hunter2@db1/nova_cell0',
      transport_url: 'none:/',
      disabled: false,
      is_cell0: true,
      status: 'available',
    },
    {
      id: 2,
      uuid: 'c1',
      name: 'cell1',
      database_connection: 'mysql+pymysql://nova:hunter2@db2/nova',
      transport_url: 'rabbit://openstack:hunter2@mq1:5672/',
      disabled: false,
      is_cell0: false,
      status: 'unavailable',
      error: 'connect ECONNREFUSED',
    },
  )
  s.nova_api.flavors.push({
    id: 1,
    flavorid: '1',
    name: 'm1.tiny',
    memory_mb: 512,
    vcpus: 1,
    swap: 0,
    root_gb: 1,
    ephemeral_gb: 0,
    rxtx_factor: 1,
    vcpu_weight: null,
    disabled: false,
    is_public: true,
    description: null,
    extra_specs: {'hw:cpu_policy': 'dedicated'},
  })
  s.placement.resource_providers.push({id: 1, uuid: 'rp-1', name: 'cmp1', generation: 3, root_provider_id: 1, parent_provider_id: null})
  s.placement.inventories.push({
    id: 1,
    resource_provider_id: 1,
    resource_class_id: 0,
    total: 16,
    reserved: 0,
    min_unit: 1,
    max_unit: 16,
    step_size: 1,
    allocation_ratio: 0.8999999761581421,
  })
  for (let i = 0; i < 5; i++) s.placement.allocations.push({id: i + 1, resource_provider_id: 1, consumer_id: `c-${i}`, resource_class_id: 0, used: 1})
  s.nova.services.push({
    cell_uuid: CELL0_UUID,
    id: 1,
    uuid: 's1',
    host: 'cmp1',
    binary: 'nova-compute',
    topic: 'compute',
    report_count: 3,
    disabled: false,
    disabled_reason: null,
    forced_down: false,
    last_seen_up: '2026-11-22 09:59:50',
    version: 61,
    deleted: 0,
    deleted_at: null,
    created_at: null,
    updated_at: null,
  })
  return s
}

describe('snapshot files', () => {
  it.each(['snap.json', 'snap.json.gz', 'snap.yaml', 'snap.yml.gz', 'snap.cloudctl', 'snap.cloudctl.gz'])(
    'round-trips %s and redacts every password',
    async (name) => {
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
      const raw = name.endsWith('.gz') ? '' : readFileSync(path, 'latin1')
      expect(raw).not.toContain('hunter2')
    },
  )

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

  // The reader cuts lines from 64 KiB chunks and parses runs of row lines in one go: these pin down
  // that chunk edges, batches and the line-by-line fallback read exactly what one parse per line would.
  function big(n: number): Snapshot {
    const s = sample()
    s.placement.allocations.length = 0
    for (let i = 0; i < n; i++)
      s.placement.allocations.push({id: i + 1, resource_provider_id: 1, consumer_id: `consumer-${i}-${'x'.repeat(i % 97)}`, resource_class_id: i % 3, used: i})
    return s
  }

  it.each(['big.json', 'big.json.gz'])('reads a multi-megabyte %s across chunk edges, row for row', async (name) => {
    const path = join(dir, name)
    const want = big(60_000)
    await writeSnapshotFile(want, path)
    if (!name.endsWith('.gz')) expect(readFileSync(path).length).toBeGreaterThan(3 << 20)
    const back = await readSnapshotFile(path)
    expect(back.placement.allocations).toEqual(want.placement.allocations)
    expect(back.nova.services).toEqual(want.nova.services)
  })

  it('reads multi-byte characters cut by a chunk edge', async () => {
    // Rows of 2-, 3- and 4-byte characters. The first row is padded so that the byte at 1 MiB, a
    // chunk edge for any power-of-two chunk size up to 1 MiB, falls inside a character (padding by
    // p moves the byte at 1 MiB - p onto the edge): the carry-over between chunks is what gets tested.
    const path = join(dir, 'utf8.json')
    const build = (pad: number): Snapshot => {
      const s = big(0)
      for (let i = 0; i < 30_000; i++) {
        s.placement.allocations.push({
          id: i + 1,
          resource_provider_id: 1,
          consumer_id: `${i === 0 ? 'a'.repeat(pad) : ''}ü€𝄞-${i}-${'€𝄞ü'.repeat(i % 7)}`,
          resource_class_id: 0,
          used: 1,
        })
      }
      return s
    }
    const edge = 1 << 20
    const continuation = (b: Buffer, at: number): boolean => (b[at] & 0xc0) === 0x80
    await writeSnapshotFile(build(0), path)
    const before = readFileSync(path)
    let pad = 0
    while (!continuation(before, edge - pad)) pad++
    const want = build(pad)
    await writeSnapshotFile(want, path)
    expect(continuation(readFileSync(path), edge)).toBe(true)
    const back = await readSnapshotFile(path)
    expect(back.placement.allocations).toEqual(want.placement.allocations)
  })

  it('names the line and row of a broken row deep inside a large table', async () => {
    const path = join(dir, 'broken-deep.json')
    await writeSnapshotFile(big(60_000), path)
    const lines = readFileSync(path, 'utf8').split('\n')
    const at = lines.findIndex((l) => l.includes('"consumer_id":"consumer-45000-'))
    lines[at] = '{"id":45001,"resource_provider_id":1,'
    writeFileSync(path, lines.join('\n'))
    await expect(readSnapshotFile(path)).rejects.toThrow(new RegExp(`line ${at + 1} \\(table allocations, row 45001\\) is not valid JSON`))
  })

  it('accepts CRLF line ends, indented rows, blank lines and a missing comma like one parse per line', async () => {
    const text = (await canonicalText(sample())).split('\n')
    const rows = text.filter((l) => l.includes('"consumer_id"'))
    const edited = text.map((l) => (l === rows[1] ? `   ${l}\r` : l === rows[2] ? `${l.slice(0, -1)}\n` : l)).join('\r\n')
    const back = await parseSnapshotText(edited)
    expect(back.placement.allocations).toEqual(sample().placement.allocations)
  })

  it('rejects two rows on one line, as one parse per line did', async () => {
    const text = await canonicalText(sample())
    const rows = text.split('\n').filter((l) => l.includes('"consumer_id"'))
    const joined = text.replace(`${rows[1]}\n${rows[2]}`, `${rows[1]}${rows[2]}`)
    await expect(parseSnapshotText(joined)).rejects.toThrow(/line \d+ \(table allocations, row 2\) is not valid JSON/)
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

async function canonicalText(s: Snapshot): Promise<string> {
  const path = join(dir, `canon-${Math.random().toString(36).slice(2)}.json`)
  await writeSnapshotFile(s, path)
  return readFileSync(path, 'utf8')
}
