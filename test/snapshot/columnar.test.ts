import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {gzipSync} from 'node:zlib'

import {afterAll, describe, expect, it} from 'vitest'

import {CELL0_UUID, emptySnapshot, type InstanceExtra, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {SnapshotFormatError} from '../../src/lib/errors.js'
import {decodeColumnar} from '../../src/lib/snapshot/columnar-read.js'
import {COLUMNAR_MAGIC, encodeColumnar} from '../../src/lib/snapshot/columnar.js'
import {readSnapshotFile, writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {generateCloud} from '../support/generator.js'

const dir = mkdtempSync(join(tmpdir(), 'cloudctl-columnar-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** What JSON keeps of a document: the comparison every format must pass. */
const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v))

async function roundTrip(s: Snapshot, name: string): Promise<Snapshot> {
  const path = join(dir, name)
  await writeSnapshotFile(s, path)
  return readSnapshotFile(path)
}

/** A snapshot whose rows exercise every encoding and its edges. */
function awkward(): Snapshot {
  const s = emptySnapshot({kind: 'file', description: 'edge cases'}, '2026-11-24T09:00:00.000Z')
  s.cells.push({id: 1, uuid: CELL0_UUID, name: 'cell0', database_connection: null, transport_url: null, disabled: false, is_cell0: true, status: 'available'})
  s.nova_api.flavors.push(
    // memory_mb beyond int32 (a float64 column), a description with astral and combining characters, an empty string
    {
      id: 1,
      flavorid: 'f1',
      name: 'big',
      memory_mb: 2 ** 40,
      vcpus: 1,
      swap: 0,
      root_gb: 0,
      ephemeral_gb: null,
      rxtx_factor: 1.5,
      vcpu_weight: null,
      disabled: false,
      is_public: null,
      description: 'Ünïcode 🚀 e\u0301',
      extra_specs: {'hw:cpu_policy': 'dedicated', 'trait:HW_CPU_X86_AVX2': 'required'},
    },
    {
      id: 2,
      flavorid: 'f2',
      name: '',
      memory_mb: 512,
      vcpus: 2,
      swap: 0,
      root_gb: 1,
      ephemeral_gb: 0,
      rxtx_factor: null,
      vcpu_weight: 0,
      disabled: true,
      is_public: true,
      description: null,
      extra_specs: {},
    },
  )
  s.nova_api.aggregates.push({id: 1, uuid: 'agg-1', name: 'a', hosts: ['cmp1', 'cmp2'], metadata: {availability_zone: 'az1'}})
  for (let i = 0; i < 300; i++) {
    // More distinct names than a dictionary is worth: a text column; every tenth has a lone surrogate, which UTF-8 cannot carry.
    s.nova.instances.push({
      cell_uuid: CELL0_UUID,
      id: i + 1,
      uuid: `uuid-${i}`,
      host: i % 7 === 0 ? null : `cmp${i % 3}`,
      node: `cmp${i % 3}`,
      vm_state: 'active',
      task_state: null,
      power_state: 1,
      project_id: 'p',
      user_id: 'u',
      instance_type_id: 1,
      vcpus: 1,
      memory_mb: 512,
      root_gb: 1,
      ephemeral_gb: 0,
      availability_zone: null,
      display_name: i % 10 === 0 ? `vm-\ud800-${i}` : `vm-${i}`,
      image_ref: null,
      os_type: null,
      architecture: null,
      launched_at: null,
      terminated_at: null,
      created_at: '2026-11-24 08:00:00',
      updated_at: null,
      deleted: 0,
      deleted_at: null,
      hidden: i % 2 === 0 ? false : null,
      // A key some objects lack (pci_requests): files from other tools may omit it.
      extra:
        i % 5 === 0
          ? null
          : ({flavor: `{"cur": ${i % 3}}`, numa_topology: i % 4 === 0 ? null : '{}', ...(i % 6 === 0 ? {} : {pci_requests: '[]'})} as InstanceExtra),
      // An optional key most rows lack.
      ...(i % 4 === 0 ? {compute_id: i} : {}),
    })
  }
  return s
}

describe('columnar snapshot files (.cloudctl)', () => {
  it.each(['edge.cloudctl', 'edge.cloudctl.gz'])('%s gives back exactly what JSON gives back: nulls, missing keys, objects, floats, text', async (name) => {
    const s = awkward()
    const back = await roundTrip(s, name)
    const viaJson = await roundTrip(s, 'edge.json')
    expect(asJson(back)).toEqual(asJson(viaJson))
    // Missing keys stay missing (not null), present ones stay present.
    expect('compute_id' in back.nova.instances[1]).toBe(false)
    expect(back.nova.instances[4].compute_id).toBe(4)
    expect(back.nova.instances[0].extra).toBeNull()
    expect(back.nova.instances[6].extra).toEqual({flavor: '{"cur": 0}', numa_topology: '{}'})
    expect(back.nova.instances[10].display_name).toBe('vm-\ud800-10')
    expect(back.nova_api.flavors[0].memory_mb).toBe(2 ** 40)
  })

  it('splits long text and JSON columns into segments (V8 strings have a maximum length) and reads them back in order', () => {
    const s = awkward()
    // A few dozen characters per segment: every text and JSON column spans many segments, some rows longer than one.
    const parts = encodeColumnar(s, {segmentChars: 40})
    const header = JSON.parse(
      Buffer.concat(parts).toString('utf8', COLUMNAR_MAGIC.length + 6, COLUMNAR_MAGIC.length + 6 + parts[0].readUInt32LE(COLUMNAR_MAGIC.length + 2)),
    ) as {
      sections: Array<{tables: Array<{name: string; columns: Array<{name: string; segments?: unknown[]}>}>}>
    }
    const instances = header.sections.flatMap((x) => x.tables).find((t) => t.name === 'instances')
    expect(instances?.columns.find((c) => c.name === 'uuid')?.segments?.length).toBeGreaterThan(10)
    expect(asJson(decodeColumnar(Buffer.concat(parts), 'seg.cloudctl'))).toEqual(asJson(s))
  })

  it('round-trips a generated cloud with planted faults, and the demo cloud', async () => {
    const faults = {
      'allocation.missing': 2,
      'cell.instance-duplicate': 1,
      'provider.stale': 1,
      'usage.negative-free': 1,
      'allocation.consumer-deleted': 1,
      'pinning.leaked': 1,
    }
    const generated = generateCloud({
      seed: 7,
      cells: 2,
      hostsPerCell: 16,
      instances: 200,
      migrationsInProgress: 2,
      completedMigrations: 3,
      requestSpecs: true,
      faults,
    }).snapshot
    expect(asJson(await roundTrip(generated, 'gen.cloudctl'))).toEqual(asJson(await roundTrip(generated, 'gen.json')))
    const demo = await readSnapshotFile('examples/demo-cloud.yaml')
    expect(asJson(await roundTrip(demo, 'demo.cloudctl.gz'))).toEqual(asJson(demo))
  })

  it('is recognised by its content, whatever the file is called; and JSON named .cloudctl still reads', async () => {
    const s = awkward()
    await writeSnapshotFile(s, join(dir, 'named.cloudctl'))
    writeFileSync(join(dir, 'renamed.json'), readFileSync(join(dir, 'named.cloudctl')))
    writeFileSync(join(dir, 'renamed.json.gz'), gzipSync(readFileSync(join(dir, 'named.cloudctl'))))
    await writeSnapshotFile(s, join(dir, 'text.json'))
    writeFileSync(join(dir, 'text.cloudctl'), readFileSync(join(dir, 'text.json')))
    const want = asJson(await readSnapshotFile(join(dir, 'text.json')))
    for (const f of ['renamed.json', 'renamed.json.gz', 'text.cloudctl']) expect(asJson(await readSnapshotFile(join(dir, f)))).toEqual(want)
    expect(readFileSync(join(dir, 'named.cloudctl')).subarray(0, COLUMNAR_MAGIC.length).equals(COLUMNAR_MAGIC)).toBe(true)
  })

  it('redacts passwords like every other format', async () => {
    const s = awkward()
    s.cells[0].database_connection = 'mysql+pymysql://nova:hunter2@db/nova_cell0'
    s.source.description = 'mysql://root:hunter2@db/nova_api'
    const back = await roundTrip(s, 'secret.cloudctl')
    expect(readFileSync(join(dir, 'secret.cloudctl'), 'latin1')).not.toContain('hunter2')
    expect(back.cells[0].database_connection).toBe('mysql+pymysql://nova:***@db/nova_cell0')
  })

  it('reports a truncated or damaged file as a snapshot format error, never a crash', async () => {
    await writeSnapshotFile(awkward(), join(dir, 'whole.cloudctl'))
    const whole = readFileSync(join(dir, 'whole.cloudctl'))
    const cases: Array<[string, Buffer, RegExp]> = [
      ['cut-block.cloudctl', whole.subarray(0, whole.length - 100), /truncated or corrupt/],
      ['cut-header.cloudctl', whole.subarray(0, COLUMNAR_MAGIC.length + 30), /truncated \(it ends inside its header\)/],
      ['later.cloudctl', Buffer.concat([COLUMNAR_MAGIC, Buffer.from([9]), whole.subarray(COLUMNAR_MAGIC.length + 1)]), /layout version 9/],
    ]
    for (const [name, bytes, message] of cases) {
      writeFileSync(join(dir, name), bytes)
      const error = await readSnapshotFile(join(dir, name)).catch((e: unknown) => e)
      expect(error, name).toBeInstanceOf(SnapshotFormatError)
      expect((error as Error).message, name).toMatch(message)
    }
    writeFileSync(join(dir, 'cut.cloudctl.gz'), gzipSync(whole).subarray(0, 200))
    await expect(readSnapshotFile(join(dir, 'cut.cloudctl.gz'))).rejects.toThrow(/gzip data is truncated or corrupt/)
  })

  it('hands what it read to the validator: a bad row is named as in JSON', async () => {
    const s = awkward()
    ;(s.nova.instances[3] as unknown as Record<string, unknown>).vcpus = 'two'
    await writeSnapshotFile(s, join(dir, 'bad.cloudctl'))
    await expect(readSnapshotFile(join(dir, 'bad.cloudctl'))).rejects.toThrow(/nova\.instances.*vcpus/)
  })
})
