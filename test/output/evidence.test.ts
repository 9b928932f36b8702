/**
 * Evidence cut for people (src/lib/output/evidence.ts): every array at any depth keeps its first 20
 * elements, the finding records each cut by JSON Pointer, nothing is copied or changed when nothing
 * is cut, and the check's own objects are never modified (the planners read them).
 */
import {describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {renderAuditHtml} from '../../src/lib/output/audit-html.js'
import {capEvidence, capFinding, EVIDENCE_ROWS, truncationLines} from '../../src/lib/output/evidence.js'
import {jsonDocument} from '../../src/lib/output/json-view.js'
import {CloudBuilder} from '../support/builders.js'

const rows = (n: number) => Array.from({length: n}, (_, i) => ({id: i + 1}))

describe('capEvidence', () => {
  it('keeps the first 20 rows of every long array, at any depth, and records each cut by JSON Pointer', () => {
    const evidence = {
      allocations: rows(25),
      short: rows(20),
      provider: {id: 1, children: rows(21)},
      cells: [{pinned: Array.from({length: 30}, (_, i) => i)}, {pinned: [1, 2]}],
      'odd/key~': rows(22),
    }
    const before = JSON.stringify(evidence)
    const {evidence: cut, truncated} = capEvidence(evidence)
    expect(cut.allocations).toEqual(rows(20))
    expect(cut.short).toBe(evidence.short)
    expect(cut.provider.children).toHaveLength(20)
    expect(cut.cells[0].pinned).toEqual(Array.from({length: 20}, (_, i) => i))
    expect(cut.cells[1]).toBe(evidence.cells[1])
    expect(truncated).toEqual({
      '/allocations': {shown: 20, total: 25},
      '/provider/children': {shown: 20, total: 21},
      '/cells/0/pinned': {shown: 20, total: 30},
      '/odd~1key~0': {shown: 20, total: 22},
    })
    // The check's evidence is untouched: a planner holding it sees every row.
    expect(JSON.stringify(evidence)).toBe(before)
  })

  it('returns the very same object when no array is longer than the limit', () => {
    const evidence = {allocations: rows(EVIDENCE_ROWS), provider: {id: 1}, nested: [{list: rows(3)}]}
    const r = capEvidence(evidence)
    expect(r.evidence).toBe(evidence)
    expect(r.truncated).toBeUndefined()
  })

  it('cuts an array that is the evidence itself, and arrays inside the rows it keeps', () => {
    const {evidence, truncated} = capEvidence(
      Array.from({length: 22}, () => ({ids: rows(21)})),
      20,
    )
    expect(evidence).toHaveLength(20)
    expect(Object.keys(truncated ?? {})).toHaveLength(21)
    expect(truncated?.['']).toEqual({shown: 20, total: 22})
    expect(truncated?.['/19/ids']).toEqual({shown: 20, total: 21})
  })

  it('says "… and N more" per cut list for people', () => {
    expect(truncationLines({'/blocking_allocations': {shown: 20, total: 2000}, '/odd~1key': {shown: 20, total: 21}})).toEqual([
      'blocking_allocations: … and 1980 more (2000 in all; --full-evidence shows every row)',
      'odd/key: … and 1 more (21 in all; --full-evidence shows every row)',
    ])
    expect(truncationLines(undefined)).toEqual([])
  })
})

describe('capFinding and the JSON view', () => {
  const finding = {
    check: 'providers',
    code: 'provider.stale',
    severity: 'warning',
    subject: {},
    message: 'm',
    evidence: {blocking_allocations: rows(30)},
    repair: 'r',
  }

  it("adds evidence_truncated after the finding's own fields, only when something was cut; no limit prints it whole", () => {
    const cut = capFinding(finding)
    expect(Object.keys(cut)).toEqual(['check', 'code', 'severity', 'subject', 'message', 'evidence', 'repair', 'evidence_truncated'])
    expect(cut).toMatchObject({evidence_truncated: {'/blocking_allocations': {shown: 20, total: 30}}})
    expect(capFinding(finding, null)).toBe(finding)
    const small = {...finding, evidence: {blocking_allocations: rows(2)}}
    expect(capFinding(small)).toBe(small)
  })

  it('cuts the findings of an audit and of each side of a snapshot diff by default, and none with fullEvidence', () => {
    const audit = {findings: [finding], counts: {}}
    const diff = {findings: {appeared: [{finding, related: []}], disappeared: [{finding, related: []}], persisted: [{finding, related: []}]}}
    type F = {evidence: {blocking_allocations: unknown[]}; evidence_truncated?: unknown}
    const a = jsonDocument(audit, 3) as {findings: F[]}
    expect(a.findings[0].evidence.blocking_allocations).toHaveLength(20)
    expect(a.findings[0].evidence_truncated).toEqual({'/blocking_allocations': {shown: 20, total: 30}})
    const d = jsonDocument(diff, 3) as {findings: Record<string, Array<{finding: F}>>}
    for (const side of ['appeared', 'disappeared', 'persisted']) expect(d.findings[side][0].finding.evidence.blocking_allocations).toHaveLength(20)
    const full = jsonDocument(audit, 3, {fullEvidence: true}) as {findings: F[]}
    expect(full.findings[0].evidence.blocking_allocations).toHaveLength(30)
    expect(full.findings[0]).not.toHaveProperty('evidence_truncated')
    expect(finding.evidence.blocking_allocations).toHaveLength(30)
  })

  it('leaves objects that merely have an evidence field elsewhere in a document alone', () => {
    const doc = jsonDocument({plan: {findings: [finding]}, other: {evidence: rows(30)}}, 0) as {plan: {findings: F2[]}; other: {evidence: unknown[]}}
    type F2 = {evidence: {blocking_allocations: unknown[]}}
    expect(doc.plan.findings[0].evidence.blocking_allocations).toHaveLength(30)
    expect(doc.other.evidence).toHaveLength(30)
  })
})

describe('the HTML report', () => {
  /** A host whose service was deleted while 10 deleted instances kept their allocations (3 rows each). */
  function staleCloud() {
    const b = new CloudBuilder({seed: 7, requestSpecs: false})
    b.addCell('cell1')
    b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 512, root_gb: 1})
    b.addHost('cell1', {host: 'busy1', vcpus: 64, memory_mb: 65536, local_gb: 500})
    for (let i = 0; i < 10; i++) b.deleteInstance(b.addInstance('busy1', 'm1.small').row.uuid, {keepAllocations: true})
    b.deleteComputeService('busy1', {keepProvider: true})
    return buildModel(b.build())
  }

  it('shows 20 rows of a long list with "… and N more", and every row with --full-evidence', () => {
    const model = staleCloud()
    const report = runChecks(model)
    const stale = report.findings.find((f) => f.code === 'provider.stale')
    expect(stale?.evidence.blocking_allocations).toHaveLength(30)
    const html = renderAuditHtml(report, model)
    expect(html).toContain('blocking_allocations: … and 10 more (30 in all; --full-evidence shows every row)')
    const full = renderAuditHtml(report, model, {fullEvidence: true})
    expect(full).not.toContain('… and 10 more')
    const ids = (text: string) => (text.match(/&quot;consumer_uuid&quot;/g) ?? []).length
    expect(ids(full) - ids(html)).toBe(10)
  })
})
