/**
 * Evidence cut for people, through the built CLI (`npm run build` first), on a cloud whose findings
 * carry more than 20 rows: a deleted instance whose 25 allocation rows leaked, and a host whose
 * nova-compute service was deleted while 10 deleted instances still held 30 rows on its provider.
 * The audit prints 20 of each list and the totals; --full-evidence prints every row, exactly what the
 * check found; the repairs plan from every row whatever the output cuts.
 */
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Ajv2020} from 'ajv/dist/2020.js'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runChecks} from '../../src/lib/checks/index.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {planLeaks} from '../../src/lib/repairs/leaks.js'
import {planProviders} from '../../src/lib/repairs/providers.js'
import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {CloudBuilder} from '../support/builders.js'
import {cloudctl, oneJsonDocument, ROOT} from '../support/cli.js'

interface JsonFinding {
  code: string
  subject: {consumer_uuid?: string}
  evidence: {allocations?: Array<{id: number}>; blocking_allocations?: Array<{id: number}>}
  evidence_truncated?: Record<string, {shown: number; total: number}>
}
interface Plan {
  created_at: string
  steps: Array<{op: string; table: string; key?: {id?: number}}>
}

/** Custom resource classes of one nested provider: one allocation row each. */
const WIDGETS = Array.from({length: 22}, (_, i) => `CUSTOM_WIDGET_${i + 1}`)

function cloud() {
  const b = new CloudBuilder({seed: 11, requestSpecs: false})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 512, root_gb: 1})
  for (const host of ['cmp1', 'busy1']) b.addHost('cell1', {host, vcpus: 64, memory_mb: 65536, local_gb: 500})
  b.addChildProvider('cmp1', {name: 'cmp1_widgets', inventories: Object.fromEntries(WIDGETS.map((rc) => [rc, {total: 1}]))})
  const wide = b.addInstance('cmp1', 'm1.small').row.uuid
  b.addAllocations(wide, 'cmp1', Object.fromEntries(WIDGETS.map((rc) => [rc, 1])))
  b.deleteInstance(wide, {keepAllocations: true})
  for (let i = 0; i < 10; i++) b.deleteInstance(b.addInstance('busy1', 'm1.small').row.uuid, {keepAllocations: true})
  b.deleteComputeService('busy1', {keepProvider: true})
  return {snapshot: b.build(), wide}
}

let dir: string
let file: string
let built: ReturnType<typeof cloud>

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cloudctl-evidence-'))
  file = join(dir, 'cloud.json')
  built = cloud()
  await writeSnapshotFile(built.snapshot, file)
})

afterAll(() => rmSync(dir, {recursive: true, force: true}))

async function audit(extra: string[] = []): Promise<JsonFinding[]> {
  const r = await cloudctl(['audit', 'all', '--snapshot', file, '--json', ...extra])
  expect(r.exitCode).toBe(3)
  const doc = oneJsonDocument(r.stdout) as {findings: JsonFinding[]}
  const schema = JSON.parse(readFileSync(join(ROOT, 'docs/json-schema/audit-all.schema.json'), 'utf8')) as {
    properties: {findings: {items: {properties: Record<string, unknown>}}}
  }
  // The finding as the schema declares it, field by field (its subject's required fields were drafted from the demo).
  const validate = new Ajv2020({strict: true, allowUnionTypes: true}).compile(schema.properties.findings.items.properties.evidence_truncated as object)
  for (const f of doc.findings) if (f.evidence_truncated !== undefined) expect(validate(f.evidence_truncated), JSON.stringify(validate.errors)).toBe(true)
  return doc.findings
}

const wideLeak = (fs: JsonFinding[]) => fs.find((f) => f.code === 'allocation.consumer-deleted' && f.subject.consumer_uuid === built.wide)
const staleProvider = (fs: JsonFinding[]) => fs.find((f) => f.code === 'provider.stale')

describe('evidence in the audit documents', () => {
  it('--json prints 20 rows of each long list and evidence_truncated with the totals; short lists as they are', async () => {
    const findings = await audit()
    expect(wideLeak(findings)?.evidence.allocations).toHaveLength(20)
    expect(wideLeak(findings)?.evidence_truncated).toEqual({'/allocations': {shown: 20, total: 25}})
    expect(staleProvider(findings)?.evidence.blocking_allocations).toHaveLength(20)
    expect(staleProvider(findings)?.evidence_truncated).toEqual({'/blocking_allocations': {shown: 20, total: 30}})
    const others = findings.filter((f) => f !== wideLeak(findings) && f !== staleProvider(findings))
    expect(others.length).toBeGreaterThan(0)
    for (const f of others) expect(f).not.toHaveProperty('evidence_truncated')
  })

  it('--full-evidence prints every row: the evidence exactly as the checks found it', async () => {
    const findings = await audit(['--full-evidence'])
    expect(wideLeak(findings)?.evidence.allocations).toHaveLength(25)
    expect(staleProvider(findings)?.evidence.blocking_allocations).toHaveLength(30)
    for (const f of findings) expect(f).not.toHaveProperty('evidence_truncated')
    const checked = runChecks(buildModel(built.snapshot)).findings
    expect(findings.map((f) => f.evidence)).toEqual(JSON.parse(JSON.stringify(checked.map((f) => f.evidence))))
  })

  it('audit providers and snapshot diff take --full-evidence too', async () => {
    const providers = await cloudctl(['audit', 'providers', '--snapshot', file, '--json', '--full-evidence'])
    expect(staleProvider((oneJsonDocument(providers.stdout) as {findings: JsonFinding[]}).findings)?.evidence.blocking_allocations).toHaveLength(30)
    const empty = join(dir, 'empty.json')
    const b = new CloudBuilder({seed: 11, requestSpecs: false})
    b.addCell('cell1')
    await writeSnapshotFile(b.build(), empty)
    for (const [flag, rows] of [
      [[], 20],
      [['--full-evidence'], 30],
    ] as const) {
      const r = await cloudctl(['snapshot', 'diff', empty, file, '--json', ...flag])
      const doc = oneJsonDocument(r.stdout) as {findings: {appeared: Array<{finding: JsonFinding}>}}
      expect(staleProvider(doc.findings.appeared.map((x) => x.finding))?.evidence.blocking_allocations).toHaveLength(rows)
    }
  })
})

describe('repair plans do not depend on what the output cuts', () => {
  const stable = (p: Plan) => JSON.stringify({...p, created_at: null})
  const deleted = (p: Plan) => new Set(p.steps.filter((s) => s.op === 'delete' && s.table === 'allocations').map((s) => s.key?.id))

  it.each([
    ['leaks', planLeaks, (fs: JsonFinding[]) => wideLeak(fs)?.evidence.allocations ?? []],
    ['providers', planProviders, (fs: JsonFinding[]) => staleProvider(fs)?.evidence.blocking_allocations ?? []],
  ] as const)('repair %s deletes every row --full-evidence lists, and plans as the planner does on the whole findings', async (verb, planner, rows) => {
    const r = await cloudctl(['repair', verb, '--snapshot', file, '--json'])
    expect(r.exitCode).toBe(3)
    const plan = (oneJsonDocument(r.stdout) as {plan: Plan}).plan
    const full = rows(await audit(['--full-evidence']))
    expect(full.length).toBeGreaterThan(20)
    const ids = deleted(plan)
    for (const row of full) expect(ids.has(row.id), `allocation ${row.id} deleted`).toBe(true)
    expect(stable(plan)).toBe(stable(JSON.parse(JSON.stringify(planner(buildModel(built.snapshot)))) as Plan))
  })
})
