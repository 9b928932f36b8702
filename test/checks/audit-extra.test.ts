/**
 * Codes and behaviours not covered by checks.test.ts: aggregate.host-not-found, aggregate.no-uuid,
 * the duplicate-instance subject order, shared expected amounts (same flavor blob, different boot
 * source), the human report without colours, and the indexes the audits share.
 */
import {afterEach, describe, expect, it} from 'vitest'

import {AuditContext, runChecks} from '../../src/lib/checks/index.js'
import {TextMemo} from '../../src/lib/util/text-memo.js'
import {parseStats} from '../../src/lib/domain/nova-objects.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CELL0_UUID, type Instance, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {jsonTopLevel} from '../../src/lib/domain/json-scan.js'
import {renderFindings} from '../../src/lib/output/findings-formatter.js'
import {fixedDisplay} from '../../src/lib/output/display.js'
import {CloudBuilder} from '../support/builders.js'

const SMALL = {name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20}

/** One cell, a small flavor and these hosts, consistent as nova leaves them. */
function hosts(...names: string[]): CloudBuilder {
  const b = new CloudBuilder({requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor(SMALL)
  for (const host of names) b.addHost('cell1', {host, vcpus: 16, memory_mb: 65536, local_gb: 500})
  return b
}

const nodeOf = (s: Snapshot, host: string) => s.nova.compute_nodes.find((cn) => cn.host === host)!
const racksOf = (s: Snapshot) => s.nova_api.aggregates.find((a) => a.name === 'racks')!

/** Two hosts with an instance each, both in aggregate racks; built unless a test has more to do first. */
function twoHosts(before?: (b: CloudBuilder, onCmp2: string) => void) {
  const b = hosts('cmp1', 'cmp2')
  b.addInstance('cmp1', 'm1.small')
  const onCmp2 = b.addInstance('cmp2', 'm1.small').row.uuid
  b.addAggregate({name: 'racks', hosts: ['cmp1', 'cmp2']})
  before?.(b, onCmp2)
  return b.build()
}

describe('aggregates: codes the generator has no switch for', () => {
  it('aggregate.host-not-found: a nova aggregate lists a host with no live compute node', () => {
    const snap = twoHosts()
    racksOf(snap).hosts.push('cmp-gone')
    const report = runChecks(buildModel(snap))
    expect(report.findings.map((f) => [f.code, f.severity, f.subject])).toEqual([
      ['aggregate.host-not-found', 'warning', {aggregate: 'racks', host: 'cmp-gone'}],
    ])
  })

  it('aggregate.host-not-found: a host whose compute node is soft-deleted is not found either', () => {
    // cmp2's instance went away with its allocations; then its compute node row was soft-deleted
    const snap = twoHosts((b, onCmp2) => b.deleteInstance(onCmp2))
    const cn = nodeOf(snap, 'cmp2')
    cn.deleted = cn.id
    const report = runChecks(buildModel(snap), {checks: ['aggregates']})
    expect(report.findings.map((f) => [f.code, f.subject.host])).toEqual([['aggregate.host-not-found', 'cmp2']])
  })

  it('aggregate.no-uuid: an aggregate without a uuid is reported once and its hosts are not judged', () => {
    const snap = twoHosts()
    snap.nova_api.aggregates.push({id: 99, uuid: null, name: 'legacy', hosts: ['cmp1', 'cmp-gone'], metadata: {}})
    const report = runChecks(buildModel(snap))
    expect(report.findings.map((f) => [f.code, f.severity, f.subject])).toEqual([['aggregate.no-uuid', 'warning', {aggregate: 'legacy'}]])
    expect(report.findings[0].evidence.aggregate).toMatchObject({id: 99, uuid: null, name: 'legacy'})
  })
})

describe('cells: duplicate instance subject', () => {
  it('names the mapped cell first, whatever order the rows were read in', () => {
    const b = hosts('cmp1')
    const uuid = b.addInstance('cmp1', 'm1.small').row.uuid
    const snap = b.build()
    const inst = snap.nova.instances.find((i) => i.uuid === uuid)!
    const copy: Instance = {...inst, cell_uuid: CELL0_UUID, id: 500, host: null, node: null, vm_state: 'error'}
    snap.nova.instances.unshift(copy) // cell0 row first, as a capture reading cell0 first returns it
    const [f] = runChecks(buildModel(snap)).findings
    expect([f.code, f.subject.cell, f.subject.host]).toEqual(['cell.instance-duplicate', 'cell1,cell0', 'cmp1'])
  })
})

describe('leaks: expected amounts shared between instances of one flavor blob', () => {
  it('keeps boot-from-volume apart: the same flavor with and without a root disk', () => {
    const b = hosts('cmp1')
    const image = b.addInstance('cmp1', 'm1.small').row
    const volume = b.addInstance('cmp1', 'm1.small', {boot_from_volume: true}).row
    const snap = b.build()
    expect(image.extra?.flavor).toBe(volume.extra?.flavor)
    expect(runChecks(buildModel(snap)).findings).toEqual([])
    // the volume-backed one now holds a root disk it should not
    const rp = snap.placement.resource_providers.find((p) => p.name === 'cmp1')!
    const allocs = snap.placement.allocations
    allocs.push({
      id: Math.max(...allocs.map((a) => a.id)) + 1,
      resource_provider_id: rp.id,
      consumer_id: volume.uuid,
      resource_class_id: b.rcId('DISK_GB'),
      used: SMALL.root_gb,
    })
    const findings = runChecks(buildModel(snap)).findings
    expect(findings.map((f) => [f.code, f.subject.instance_uuid])).toEqual([['allocation.amount-mismatch', volume.uuid]])
    expect(findings[0].evidence.differences).toEqual({DISK_GB: {expected: 0, allocated: SMALL.root_gb}})
  })
})

describe('human report', () => {
  const saved = {NO_COLOR: process.env.NO_COLOR, FORCE_COLOR: process.env.FORCE_COLOR}
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  })
  const report = () => {
    const snap = twoHosts()
    racksOf(snap).hosts.push('cmp-gone')
    snap.nova_api.aggregates.push({id: 99, uuid: null, name: 'legacy', hosts: [], metadata: {}})
    return runChecks(buildModel(snap))
  }
  // eslint-disable-next-line no-control-regex
  const ANSI = /\u001b\[\d+m/

  it('has no colour under NO_COLOR, even when colour is forced', () => {
    process.env.NO_COLOR = '1'
    process.env.FORCE_COLOR = '1'
    const text = renderFindings(report(), fixedDisplay(0), {summaryTable: true})
    expect(text).not.toMatch(ANSI)
    expect(text).toContain('✖ aggregates: 2 findings (2 warning)')
    expect(text).toContain('✔ leaks: no findings')
    expect(text).toContain('aggregate.host-not-found')
    expect(text).toMatch(/total\s*│\s*0\s*│\s*0\s*│\s*2\s*│\s*0\s*│\s*2/)
  })
  // Colour on (FORCE_COLOR at process start, as chalk reads it once) is checked on the built CLI: test/integration/audit-demo.test.ts.
})

describe('indexes the audits share', () => {
  it('TextMemo computes once per distinct text, also past a full bucket of same-length texts', () => {
    const memo = new TextMemo<number>()
    let calls = 0
    const make = (t: string) => {
      calls++
      return t.length * 1000 + Number(t.slice(1))
    }
    // distinct string objects with equal contents, as JSON.parse returns them
    const texts = Array.from({length: 20}, (_, i) => `x${String(i).padStart(3, '0')}`)
    for (let round = 0; round < 3; round++) for (const t of texts) expect(memo.get([...t].join(''), make)).toBe(4000 + Number(t.slice(1)))
    expect(calls).toBe(texts.length)
    expect(memo.get('', () => -1)).toBe(-1)
    expect(memo.get('', () => -2)).toBe(-1)
  })

  it('AuditContext.liveRows: live, non-hidden rows only, in the model order', () => {
    const cloud = hosts('cmp1')
    const uuids = [1, 2, 3, 4].map(() => cloud.addInstance('cmp1', 'm1.small').row.uuid)
    const snap = cloud.build()
    const [a, b, gone, twice] = uuids.map((u) => snap.nova.instances.find((i) => i.uuid === u)!)
    gone.deleted = gone.id
    snap.nova.instances.push({...twice, cell_uuid: CELL0_UUID, id: 900}, {...a, cell_uuid: CELL0_UUID, id: 901, hidden: true})
    const ctx = new AuditContext(buildModel(snap))
    const order = Array.from({length: ctx.instanceRows.size}, (_, k) => ctx.instanceRows.order(k))
    const live = order.flatMap((rows) => {
      const l = ctx.liveOf(rows[0].uuid, rows)
      return l ? [[rows[0].uuid, l.length]] : []
    })
    expect(live).toEqual([
      [a.uuid, 1],
      [b.uuid, 1],
      [twice.uuid, 2],
    ])
    expect(ctx.liveRows(a.uuid)?.map((i) => i.id)).toEqual([a.id])
    expect(ctx.liveRows(gone.uuid)).toBeUndefined()
    expect(ctx.liveRows('no-such-uuid')).toBeUndefined()
  })

  it('CloudModel.statsReadable agrees with parseStats', () => {
    const snap = hosts('cmp1').build()
    const cn = nodeOf(snap, 'cmp1')
    for (const text of ['{"num_instances": "3", "io_workload": 0}', '{}', null, '', '{"a": ', '[1, 2]', '"text"', '42']) {
      cn.stats = text
      const model = buildModel(snap)
      const fast = model.statsReadable(cn)
      const full = parseStats(text)
      expect(fast, String(text)).toEqual(full.ok ? {ok: true} : {ok: false, error: full.error})
      // and once parsed, the cached answer is used
      model.stats(cn)
      expect(model.statsReadable(cn)).toEqual(fast)
    }
  })
})

describe('snapshot.unreadable-blob for compute node stats', () => {
  it.each([
    {text: '{"num_instances": "3", ', why: 'not valid JSON'},
    {text: '["num_instances"]', why: 'not a JSON object'},
  ])("$text is reported with the parser's own words ($why)", ({text, why}) => {
    const snap = twoHosts()
    nodeOf(snap, 'cmp1').stats = text
    const report = runChecks(buildModel(snap))
    expect(report.findings.map((f) => [f.code, f.subject.host, f.evidence.column])).toEqual([['snapshot.unreadable-blob', 'cmp1', 'stats']])
    const parsed = parseStats(text)
    expect(parsed.ok).toBe(false)
    expect(report.findings[0].evidence.error).toBe(parsed.ok ? undefined : parsed.error)
    expect(String(report.findings[0].evidence.error)).toContain(why)
  })
})

describe('jsonTopLevel (the scan CloudModel.statsReadable uses to decide stats readability)', () => {
  const verdict = (text: string) => {
    try {
      const v: unknown = JSON.parse(text)
      return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v
    } catch {
      return undefined
    }
  }
  const corpus = [
    '{}',
    '[]',
    '{"a": 1}',
    ' {"num_instances": "3", "io_workload": "0"} ',
    '{"a": {"b": [1, 2, {"c": null}]}, "d": [[], {}]}',
    '"text"',
    '42',
    '-0.5e+10',
    '0',
    'true',
    'false',
    'null',
    '"\\u00e9\\n\\"\\\\\\/\\b\\f\\r\\t"',
    '"\u2028"',
    '[1e5, -1E-5, 0.25]',
    '',
    ' ',
    '{',
    '}',
    '{"a": 1,}',
    '[1,]',
    '[,1]',
    '{"a" 1}',
    '{"a": 1 "b": 2}',
    '{a: 1}',
    "{'a': 1}",
    '01',
    '1.',
    '.5',
    '-',
    '1e',
    '+1',
    '"\\x41"',
    '"\\u12"',
    '"tab\there"',
    '"unterminated',
    '[1] [2]',
    '{"a": tru}',
    'nul',
    'NaN',
    '[1, 2',
    '{"a": [}',
    '\uFEFF{}',
    '{"nova_object.name": "NUMATopology", "nova_object.data": {"cells": [',
  ]
  it.each(corpus.map((text) => ({text})))('agrees with JSON.parse on $text', ({text}) => {
    expect(jsonTopLevel(text)).toBe(verdict(text))
  })

  it('agrees with JSON.parse on every blob of a generated cloud', async () => {
    const {generateCloud} = await import('../support/generator.js')
    const {snapshot} = generateCloud({seed: 3, hostsPerCell: 12})
    const blobs = [
      ...snapshot.nova.compute_nodes.flatMap((cn) => [cn.stats, cn.numa_topology, cn.cpu_info]),
      ...snapshot.nova.instances.flatMap((i) => [i.extra?.flavor, i.extra?.numa_topology]),
    ]
    const texts = blobs.filter((t): t is string => typeof t === 'string' && t !== '')
    expect(texts.length).toBeGreaterThan(100)
    for (const t of texts) expect(jsonTopLevel(t)).toBe(verdict(t))
    // and a truncation anywhere is caught
    for (const t of texts.slice(0, 20))
      for (const cut of [1, Math.floor(t.length / 2), t.length - 1]) expect(jsonTopLevel(t.slice(0, cut))).toBe(verdict(t.slice(0, cut)))
  })
})
