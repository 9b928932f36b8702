/**
 * Codes and behaviours not covered by checks.test.ts: aggregate.host-not-found, aggregate.no-uuid,
 * the duplicate-instance subject order, shared expected amounts (same flavor blob, different boot
 * source), the human report without colours, and the indexes the audits share.
 */
import {afterEach, describe, expect, it} from 'vitest'

import {AuditContext, runChecks, TextMemo} from '../../src/lib/checks/index.js'
import {parseStats} from '../../src/lib/domain/nova-objects.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {CELL0_UUID, type Instance} from '../../src/lib/domain/snapshot.js'
import {jsonTopLevel} from '../../src/lib/domain/json-scan.js'
import {renderFindings} from '../../src/lib/output/findings-formatter.js'
import {MiniCloud, SMALL} from './mini-cloud.js'

function twoHosts() {
  const c = new MiniCloud()
  const h1 = c.host('cmp1')
  const h2 = c.host('cmp2')
  c.instance(h1)
  c.instance(h2)
  c.aggregate('racks', [h1, h2])
  return {c, h1, h2}
}

describe('aggregates: codes the generator has no switch for', () => {
  it('aggregate.host-not-found: a nova aggregate lists a host with no live compute node', () => {
    const {c} = twoHosts()
    c.snap.nova_api.aggregates[0].hosts.push('cmp-gone')
    const report = runChecks(c.build())
    expect(report.findings.map((f) => [f.code, f.severity, f.subject])).toEqual([['aggregate.host-not-found', 'warning', {aggregate: 'racks', host: 'cmp-gone'}]])
  })

  it('aggregate.host-not-found: a host whose compute node is soft-deleted is not found either', () => {
    const {c, h2} = twoHosts()
    c.snap.nova.instances = c.snap.nova.instances.filter((i) => i.host !== 'cmp2')
    c.snap.placement.allocations = c.snap.placement.allocations.filter((a) => a.resource_provider_id !== h2.rp.id)
    h2.cn.deleted = h2.cn.id
    const report = runChecks(c.build(), {checks: ['aggregates']})
    expect(report.findings.map((f) => [f.code, f.subject.host])).toEqual([['aggregate.host-not-found', 'cmp2']])
  })

  it('aggregate.no-uuid: an aggregate without a uuid is reported once and its hosts are not judged', () => {
    const {c} = twoHosts()
    c.snap.nova_api.aggregates.push({id: 99, uuid: null, name: 'legacy', hosts: ['cmp1', 'cmp-gone'], metadata: {}})
    const report = runChecks(c.build())
    expect(report.findings.map((f) => [f.code, f.severity, f.subject])).toEqual([['aggregate.no-uuid', 'warning', {aggregate: 'legacy'}]])
    expect(report.findings[0].evidence.aggregate).toMatchObject({id: 99, uuid: null, name: 'legacy'})
  })
})

describe('cells: duplicate instance subject', () => {
  it('names the mapped cell first, whatever order the rows were read in', () => {
    const c = new MiniCloud()
    const h1 = c.host('cmp1')
    const inst = c.instance(h1)
    const copy: Instance = {...inst, cell_uuid: CELL0_UUID, id: 500, host: null, node: null, vm_state: 'error'}
    c.snap.nova.instances.unshift(copy) // cell0 row first, as a capture reading cell0 first returns it
    const [f] = runChecks(c.build()).findings
    expect([f.code, f.subject.cell, f.subject.host]).toEqual(['cell.instance-duplicate', 'cell1,cell0', 'cmp1'])
  })
})

describe('leaks: expected amounts shared between instances of one flavor blob', () => {
  it('keeps boot-from-volume apart: the same flavor with and without a root disk', () => {
    const c = new MiniCloud()
    const h1 = c.host('cmp1')
    const image = c.instance(h1, SMALL)
    const volume = c.instance(h1, SMALL, {bfv: true})
    expect(image.extra?.flavor).toBe(volume.extra?.flavor)
    expect(runChecks(c.build()).findings).toEqual([])
    // the volume-backed one now holds a root disk it should not
    c.allocate(h1.rp, volume.uuid, 2, SMALL.root_gb)
    const findings = runChecks(c.build()).findings
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
    const {c} = twoHosts()
    c.snap.nova_api.aggregates[0].hosts.push('cmp-gone')
    c.snap.nova_api.aggregates.push({id: 99, uuid: null, name: 'legacy', hosts: [], metadata: {}})
    return runChecks(c.build())
  }
  // eslint-disable-next-line no-control-regex
  const ANSI = /\u001b\[\d+m/

  it('has no colour under NO_COLOR, even when colour is forced', () => {
    process.env.NO_COLOR = '1'
    process.env.FORCE_COLOR = '1'
    const text = renderFindings(report(), {summaryTable: true})
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
    const c = new MiniCloud()
    const h1 = c.host('cmp1')
    const a = c.instance(h1)
    const b = c.instance(h1)
    const gone = c.instance(h1)
    gone.deleted = gone.id
    const twice = c.instance(h1)
    c.snap.nova.instances.push({...twice, cell_uuid: CELL0_UUID, id: 900}, {...a, cell_uuid: CELL0_UUID, id: 901, hidden: true})
    const ctx = new AuditContext(c.build())
    const live = ctx.instanceRows.order.flatMap((rows) => {
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
    const c = new MiniCloud()
    const {cn} = c.host('cmp1')
    for (const text of ['{"num_instances": "3", "io_workload": 0}', '{}', null, '', '{"a": ', '[1, 2]', '"text"', '42']) {
      cn.stats = text
      const model = buildModel(c.snap)
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
  ])('$text is reported with the parser\'s own words ($why)', ({text, why}) => {
    const {c, h1} = twoHosts()
    h1.cn.stats = text
    const report = runChecks(c.build())
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
    '{}', '[]', '{"a": 1}', ' {"num_instances": "3", "io_workload": "0"} ', '{"a": {"b": [1, 2, {"c": null}]}, "d": [[], {}]}', '"text"', '42', '-0.5e+10', '0', 'true', 'false', 'null',
    '"\\u00e9\\n\\"\\\\\\/\\b\\f\\r\\t"', '"\u2028"', '[1e5, -1E-5, 0.25]',
    '', ' ', '{', '}', '{"a": 1,}', '[1,]', '[,1]', '{"a" 1}', '{"a": 1 "b": 2}', '{a: 1}', "{'a': 1}", '01', '1.', '.5', '-', '1e', '+1', '"\\x41"', '"\\u12"', '"tab\there"',
    '"unterminated', '[1] [2]', '{"a": tru}', 'nul', 'NaN', '[1, 2', '{"a": [}', '\uFEFF{}', '{"nova_object.name": "NUMATopology", "nova_object.data": {"cells": [',
  ]
  it.each(corpus.map((text) => ({text})))('agrees with JSON.parse on $text', ({text}) => {
    expect(jsonTopLevel(text)).toBe(verdict(text))
  })

  it('agrees with JSON.parse on every blob of a generated cloud', async () => {
    const {generateCloud} = await import('../support/generator.js')
    const {snapshot} = generateCloud({seed: 3, hostsPerCell: 12})
    const blobs = [...snapshot.nova.compute_nodes.flatMap((cn) => [cn.stats, cn.numa_topology, cn.cpu_info]), ...snapshot.nova.instances.flatMap((i) => [i.extra?.flavor, i.extra?.numa_topology])]
    const texts = blobs.filter((t): t is string => typeof t === 'string' && t !== '')
    expect(texts.length).toBeGreaterThan(100)
    for (const t of texts) expect(jsonTopLevel(t)).toBe(verdict(t))
    // and a truncation anywhere is caught
    for (const t of texts.slice(0, 20)) for (const cut of [1, Math.floor(t.length / 2), t.length - 1]) expect(jsonTopLevel(t.slice(0, cut))).toBe(verdict(t.slice(0, cut)))
  })
})
