/**
 * The audit view reads instance_extra's blobs by digest (db/read-cell.ts readExtraDigests and
 * attachExtras): each row's SHA-256 first, each distinct text then once. Held to the plain read (readExtras) on the rows
 * that make it hard: an instance with two live extra rows (the lowest id is kept), NULL and empty
 * blobs, one text on many instances and in two columns, multi-byte text, a soft-deleted extra row,
 * an extra row of no instance read, an instance without one, extras out of the instances' order, and
 * texts that read alike when run together.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {closeConnection, type Connection, openConnection} from '../../src/lib/db/connection.js'
import {attachExtras, AUDIT_VIEW, readExtraDigests, readExtras} from '../../src/lib/db/read-cell.js'
import {openReader, type Reader, readRows} from '../../src/lib/db/table-reader.js'
import {parseDbUrl} from '../../src/lib/db/url.js'
import type {Instance} from '../../src/lib/domain/snapshot.js'
import {INSTANCES} from '../../src/lib/domain/tables/nova-cell.js'
import {createTestCloud, type TestCloud} from '../support/db.js'

const uuid = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const FLAVOR = JSON.stringify({'nova_object.name': 'Flavor', 'nova_object.data': {name: 'm1.small', vcpus: 1, extra_specs: {'hw:cpu_policy': 'shared'}}})
const NUMA = (pins: string): string => JSON.stringify({'nova_object.name': 'InstanceNUMATopology', 'nova_object.data': {cells: [{cpu_pinning_raw: pins}]}})

// [instance number or null (no instance), deleted, numa_topology, pci_requests, flavor]
const EXTRAS: Array<[number | null, number, string | null, string | null, string | null]> = [
  [2, 0, NUMA('{"0": 4}'), '[]', FLAVOR], // before instance 1: out of order
  [1, 0, NUMA('{"0": 2}'), '[]', FLAVOR],
  [3, 0, null, null, null],
  [4, 0, '', '', ''],
  [5, 0, NUMA('{"0": 6}'), '[]', FLAVOR],
  [5, 0, NUMA('{"0": 8}'), '[]', 'later row of 5'], // a second live row: the lowest id stays
  [6, 1, NUMA('{"0": 9}'), '[]', 'soft-deleted'],
  [null, 0, NUMA('{"0": 10}'), '[]', FLAVOR], // an instance not read
  [8, 0, 'née – 東京 ✓', '[]', 'née – 東京 ✓'], // one text in two columns, multi-byte
  [9, 0, NUMA('{"0": 4}'), '[]', FLAVOR], // the same texts as instance 2
  // Texts that run together alike across the columns, and a text that reads like a NULL: two rows
  // share the one digest of their columns only when they share every text.
  [10, 0, 'ab', '[]', 'c'],
  [11, 0, 'a', '[]', 'bc'],
  [12, 0, '-', '[]', FLAVOR],
  [13, 0, null, '[]', FLAVOR],
] // instance 7 has no extra row; instance 99 is not among the instances read

// With 40 more instances of one NUMA topology and flavor the texts repeat: both columns are read by
// digest; without them most texts are distinct and both are read as text. With 40 more pinned
// guests of one flavor, each its own NUMA topology, the flavor is read by digest and the topology
// as text.
describe.each([
  {bulk: 0, pinned: false, byDigest: [false, false]},
  {bulk: 40, pinned: false, byDigest: [true, true]},
  {bulk: 40, pinned: true, byDigest: [false, true]},
])('instance_extra read by digest ($bulk instances alike, pinned: $pinned)', ({bulk, pinned, byDigest}) => {
  let cloud: TestCloud | undefined
  let admin: Connection | undefined
  let reader: Reader | undefined

  beforeAll(async () => {
    cloud = await createTestCloud(`extras_digest${bulk}${pinned ? 'p' : ''}`)
    const url = cloud.cellUrls.cell1 as string
    admin = await openConnection(url)
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 99]) {
      await admin.query("INSERT INTO instances (uuid, deleted, vm_state, host, node) VALUES (?, 0, 'active', 'cmp1', 'cmp1')", [uuid(n)])
    }
    for (const [n, deleted, numa, pci, flavor] of EXTRAS) {
      await admin.query('INSERT INTO instance_extra (instance_uuid, deleted, numa_topology, pci_requests, flavor) VALUES (?, ?, ?, ?, ?)', [
        n === null ? uuid(99) : uuid(n),
        deleted,
        numa,
        pci,
        flavor,
      ])
    }
    for (let n = 100; n < 100 + bulk; n++) {
      await admin.query("INSERT INTO instances (uuid, deleted, vm_state, host, node) VALUES (?, 0, 'active', 'cmp1', 'cmp1')", [uuid(n)])
      await admin.query("INSERT INTO instance_extra (instance_uuid, deleted, numa_topology, pci_requests, flavor) VALUES (?, 0, ?, '[]', ?)", [
        uuid(n),
        NUMA(pinned ? `{"0": ${n}}` : '{"0": 4}'),
        FLAVOR,
      ])
    }
    reader = await openReader('cell1', parseDbUrl(url), () => undefined)
  })
  afterAll(async () => {
    if (reader) await closeConnection(reader.conn)
    await closeConnection(admin)
    await cloud?.drop()
  })

  const instances = async (): Promise<Instance[]> =>
    readRows(reader as Reader, INSTANCES, {cellUuid: 'c1', leaveOut: AUDIT_VIEW.instances, where: 'uuid <> ?', params: [uuid(99)]})

  it.each([
    ['the audit view', AUDIT_VIEW.instance_extra],
    ['every column', []],
  ])('gives every instance the extra row the plain read gives it (%s)', async (_, leaveOut) => {
    const plain = await instances()
    await readExtras(reader as Reader, plain, 'deleted = 0', [], leaveOut)
    const digest = await instances()
    await attachExtras(reader as Reader, digest, await readExtraDigests(reader as Reader, leaveOut))
    expect(digest).toEqual(plain)
    // What the rows above plant is there to be read.
    const extraOf = (n: number) => digest.find((i) => i.uuid === uuid(n))?.extra
    expect(extraOf(5)?.flavor).toBe(FLAVOR)
    expect(extraOf(7)).toBeNull()
    expect(extraOf(3)).toMatchObject({numa_topology: null, flavor: null})
    expect(extraOf(4)).toMatchObject({numa_topology: '', flavor: ''})
    expect(extraOf(8)).toMatchObject({numa_topology: 'née – 東京 ✓', flavor: 'née – 東京 ✓'})
    expect(extraOf(6)).toBeNull()
    expect(extraOf(10)).toMatchObject({numa_topology: 'ab', flavor: 'c'})
    expect(extraOf(11)).toMatchObject({numa_topology: 'a', flavor: 'bc'})
    expect(extraOf(12)).toMatchObject({numa_topology: '-', flavor: FLAVOR})
    expect(extraOf(13)).toMatchObject({numa_topology: null, flavor: FLAVOR})
  })

  it('reads by digest the columns whose texts repeat', async () => {
    expect((await readExtraDigests(reader as Reader, AUDIT_VIEW.instance_extra)).byDigest).toEqual(byDigest)
  })

  it('keeps one string per distinct text', async () => {
    const rows = await instances()
    await attachExtras(reader as Reader, rows, await readExtraDigests(reader as Reader, AUDIT_VIEW.instance_extra))
    const [two, nine] = [2, 9].map((n) => rows.find((i) => i.uuid === uuid(n))?.extra)
    expect(nine?.numa_topology).toBe(NUMA('{"0": 4}'))
    expect(Object.is(two?.numa_topology, nine?.numa_topology)).toBe(true)
  })

  it('gives instances of one combination of texts one row object when every column is read by digest', async () => {
    const rows = await instances()
    await attachExtras(reader as Reader, rows, await readExtraDigests(reader as Reader, AUDIT_VIEW.instance_extra))
    const extraOf = (n: number) => rows.find((i) => i.uuid === uuid(n))?.extra
    // 2 and 9 hold the same texts; 1 a topology of its own, 12 a flavor alike and a topology not.
    expect(extraOf(2)).toEqual(extraOf(9))
    expect(Object.is(extraOf(2), extraOf(9))).toBe(byDigest.every(Boolean))
    for (const n of [1, 12, 13]) expect(Object.is(extraOf(2), extraOf(n))).toBe(false)
    expect(Object.is(extraOf(12), extraOf(13))).toBe(false)
  })
})
