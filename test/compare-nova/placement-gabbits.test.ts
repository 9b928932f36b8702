/**
 * Replays placement's own allocation-candidates and same_subtree gabbits through the engine:
 * record_gabbits.py builds each gabbit file's fixture world with placement's own fixture classes
 * (python3-placement 8), sends the file's requests in order to placement's WSGI app and records, for every
 * GET /allocation_candidates, the world, the query and placement's answer; the engine then answers
 * the same query on the same world. The gabbits come from the placement source (the Debian package
 * does not ship them): $CLOUDCTL_PLACEMENT_SRC, a checkout or a bare git directory of
 * openstack/placement, else the mirror at /work/.mirror/openstack+placement/repo; without one the
 * suite is skipped with one line. Prints an agreement table; a disagreement fails unless listed,
 * with the reason, under "Known disagreements with placement's gabbits" in docs/engine.md.
 */
import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'

import {buildModel} from '../../src/lib/domain/model.js'
import {emptySnapshot, type PlacementTables} from '../../src/lib/domain/snapshot.js'
import {createEngineState} from '../../src/lib/engine/pipeline.js'
import {allocationCandidates} from '../../src/lib/engine/placement.js'
import {placementBadRequest} from '../../src/lib/engine/placement-query.js'
import {providerIndex} from '../../src/lib/engine/provider-index.js'
import {emptyGroup, type PlacementGroup, type PlacementRequest} from '../../src/lib/engine/placement-request.js'
import {COMPARE, recorded} from './driver.js'

const DOCS = fileURLToPath(new URL('../../docs/engine.md', import.meta.url))
const SECTION = "### Known disagreements with placement's gabbits"
const GABBITS = 'placement/tests/functional/gabbits'

interface Rec {
  file: string
  name: string
  skipped?: string
  url: string
  microversion: string
  status: number
  body: unknown
  world: Omit<PlacementTables, 'consumer_types' | 'projects' | 'users'>
}

type Verdict = {kind: 'agree'} | {kind: 'disagree'; detail: string} | {kind: 'skipped'; reason: string}

/** The gabbit files about GET /allocation_candidates: allocation-candidates*, and the same_subtree ones. */
const candidatesGabbit = (name: string) => name.endsWith('.yaml') && (name.startsWith('allocation-candidates') || name.includes('same-subtree'))

/** The gabbit files' text by name, from a checkout or a git directory; null when there is none. */
function gabbitFiles(): Map<string, string> | null {
  const src = process.env.CLOUDCTL_PLACEMENT_SRC ?? '/work/.mirror/openstack+placement/repo'
  if (!existsSync(src)) return null
  const out = new Map<string, string>()
  const dir = join(src, GABBITS)
  try {
    if (existsSync(dir)) {
      for (const f of execFileSync('ls', [dir]).toString('utf8').split('\n')) if (candidatesGabbit(f)) out.set(f, readFileSync(join(dir, f), 'utf8'))
    } else {
      const git = (args: string[]) =>
        execFileSync('git', ['--git-dir', src, ...args], {stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 1 << 26}).toString('utf8')
      for (const path of git(['ls-tree', '--name-only', 'HEAD', `${GABBITS}/`]).split('\n')) {
        const name = path.split('/').pop() as string
        if (candidatesGabbit(name)) out.set(name, git(['show', `HEAD:${path}`]))
      }
    }
  } catch {
    return null
  }
  return out.size > 0 ? out : null
}

const FILES = COMPARE ? gabbitFiles() : null
if (COMPARE && FILES === null)
  process.stderr.write(
    'test/compare-nova/placement-gabbits skipped: no placement source with its gabbits (set CLOUDCTL_PLACEMENT_SRC to a checkout of openstack/placement)\n',
  )

/** The query string as a PlacementRequest, or why the engine cannot be asked it. */
function parseQuery(url: string, mv: string): {req: PlacementRequest} | {skip: string} {
  const q = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '')
  const groups = new Map<string, PlacementGroup>()
  const g = (suffix: string) => groups.get(suffix) ?? (groups.set(suffix, emptyGroup(suffix)).get(suffix) as PlacementGroup)
  const anyTraits = microversion(mv) >= 1039
  // the validator reads the query as sent (a resourceless group sends no resources$S)
  const req: PlacementRequest = {
    groups: [],
    groupPolicy: null,
    limit: null,
    rootRequired: new Set(),
    rootForbidden: new Set(),
    microversion: /latest/.test(mv) ? '1.39' : (/(\d+\.\d+)/.exec(mv)?.[1] ?? '1.36'),
    query: [...q],
  }
  // webob's GET.get: a repeated limit keeps its first value; before 1.39 a repeated required its last
  const seen = new Set<string>()
  for (const [key, value] of q) {
    if (key === 'root_required' && seen.has(key)) return {skip: 'root_required repeated (a query-string syntax error)'}
    if (key === 'limit' && seen.has(key)) continue
    if (key.startsWith('required') && seen.has(key) && !anyTraits) {
      const grp = g(key.slice('required'.length))
      grp.required.clear()
      grp.forbidden.clear()
      grp.requiredAnyOf = []
    }
    seen.add(key)
    const m = /^(resources|required|member_of|in_tree)(.*)$/.exec(key)
    if (m) {
      const [, kind, suffix] = m as unknown as [string, string, string]
      if (kind === 'resources') {
        if (value === '') return {skip: 'an empty resources parameter (a query-string syntax error, placement parses it)'}
        for (const part of value.split(',')) {
          const [rc, n] = part.split(':')
          // int() allows surrounding blanks (a folded YAML url leaves one before each &)
          if (!rc || n === undefined || !/^\s*\d+\s*$/.test(n)) return {skip: 'a malformed resources parameter (a query-string syntax error)'}
          if (g(suffix).resources.has(rc)) return {skip: 'a resource class repeated in a group (a query-string syntax error)'}
          g(suffix).resources.set(rc, Number(n))
        }
      } else if (kind === 'required') {
        if (value.startsWith('in:')) {
          ;(g(suffix).requiredAnyOf ??= []).push(
            value
              .slice(3)
              .split(',')
              .map((t) => t.trim()),
          )
          continue
        }
        for (const t of value.split(',').map((x) => x.trim())) {
          if (t.startsWith('!')) g(suffix).forbidden.add(t.slice(1))
          else g(suffix).required.add(t)
        }
      } else if (kind === 'member_of') {
        if (value.startsWith('!')) {
          for (const a of value.slice(1).replace(/^in:/, '').split(',')) g(suffix).forbiddenAggregates.add(a)
        } else g(suffix).memberOf.push(value.replace(/^in:/, '').split(','))
      } else g(suffix).inTree = value
      continue
    }
    if (key === 'group_policy') req.groupPolicy = value
    else if (key === 'limit') {
      if (!/^\d+$/.test(value)) return {skip: 'a non-numeric limit (a query-string syntax error)'}
      req.limit = Number(value)
    } else if (key === 'root_required') {
      if (value.startsWith('in:')) continue
      for (const t of value.split(',')) {
        if (t.startsWith('!')) req.rootForbidden.add(t.slice(1))
        else req.rootRequired.add(t)
      }
    } else if (key === 'same_subtree') (req.sameSubtree ??= []).push(value.split(',').map((x) => x.trim()))
    else return {skip: `query parameter ${key}`}
  }
  req.groups = [...groups.values()].sort((a, b) => (a.suffix === '' ? -1 : b.suffix === '' ? 1 : a.suffix.localeCompare(b.suffix)))
  return {req}
}

const microversion = (mv: string) => {
  const m = /(\d+)\.(\d+)/.exec(mv)
  return m ? Number(m[1]) * 1000 + Number(m[2]) : Infinity
}

function canonical(allocations: Record<string, {resources: Record<string, number>}>): string {
  return Object.keys(allocations)
    .sort()
    .map(
      (u) =>
        `${u}{${Object.entries((allocations[u] as {resources: Record<string, number>}).resources)
          .sort()
          .map(([rc, n]) => `${rc}:${n}`)
          .join(',')}}`,
    )
    .join(' ')
}

/** allocation_requests in either shape (a list of providers before 1.12, a dict after) */
function placementRequests(body: unknown): string[] {
  const areqs = (body as {allocation_requests?: Array<{allocations: unknown}>}).allocation_requests ?? []
  return areqs
    .map((a) => {
      if (!Array.isArray(a.allocations)) return canonical(a.allocations as Record<string, {resources: Record<string, number>}>)
      const d: Record<string, {resources: Record<string, number>}> = {}
      for (const x of a.allocations as Array<{resource_provider: {uuid: string}; resources: Record<string, number>}>)
        d[x.resource_provider.uuid] = {resources: x.resources}
      return canonical(d)
    })
    .sort()
}

function replay(r: Rec): Verdict {
  if (r.skipped) return {kind: 'skipped', reason: r.skipped}
  if (r.status === 404 || microversion(r.microversion) < 1010) return {kind: 'skipped', reason: 'a microversion before GET /allocation_candidates'}
  // the engine speaks 1.36 (what nova Zed sends) to 1.39: older ones gate syntax and nested trees
  if (microversion(r.microversion) < 1029)
    return {kind: 'skipped', reason: 'a microversion before nested providers in allocation candidates (1.29); the engine models 1.36-1.39'}
  if (microversion(r.microversion) < 1036 && r.status === 400 && /Invalid query string parameters|microversion/.test(JSON.stringify(r.body)))
    return {kind: 'skipped', reason: 'a 400 for syntax a microversion before 1.36 does not accept'}
  const parsed = parseQuery(r.url, r.microversion)
  if ('skip' in parsed) return {kind: 'skipped', reason: parsed.skip}
  const snapshot = emptySnapshot({kind: 'file', path: 'gabbit'} as never)
  Object.assign(snapshot.placement, r.world)
  const model = buildModel(snapshot)
  const idx = providerIndex(model)
  const bad = placementBadRequest(idx, parsed.req)
  if (r.status === 400) {
    const detail = ((r.body as {errors?: Array<{detail?: string}>}).errors?.[0]?.detail ?? '').split('\n\n').pop()?.trim() ?? ''
    // from 1.36 (the microversions the engine models) the message is placement's, word for word
    if (bad !== null && microversion(r.microversion) >= 1036 && bad.trim() !== detail)
      return {kind: 'disagree', detail: `placement 400 (${detail}), engine 400 (${bad})`}
    return bad !== null ? {kind: 'agree'} : {kind: 'disagree', detail: `placement 400 (${detail}), engine searched`}
  }
  if (bad !== null) return {kind: 'disagree', detail: `placement ${r.status}, engine 400: ${bad}`}
  const res = allocationCandidates(idx, parsed.req, createEngineState().usageView(idx))
  const uuidOf = (id: number) => idx.providers.get(id)?.uuid ?? String(id)
  const engine = res.all
    .map((a) => {
      const d: Record<string, {resources: Record<string, number>}> = {}
      for (const p of a.parts) {
        const x = (d[uuidOf(p.rpId)] ??= {resources: {}})
        x.resources[p.rc] = (x.resources[p.rc] ?? 0) + p.amount
      }
      return canonical(d)
    })
    .sort()
  const nova = placementRequests(r.body)
  if (parsed.req.limit !== null) {
    // which candidates survive a limit follows placement's set order (documented): compare how many
    const want = Math.min(parsed.req.limit, engine.length)
    return nova.length === want && nova.every((a) => engine.includes(a))
      ? {kind: 'agree'}
      : {kind: 'disagree', detail: `limit ${parsed.req.limit}: placement ${JSON.stringify(nova)}, engine (before the limit) ${JSON.stringify(engine)}`}
  }
  return JSON.stringify(nova) === JSON.stringify(engine)
    ? {kind: 'agree'}
    : {kind: 'disagree', detail: `placement ${JSON.stringify(nova)}\n      engine ${JSON.stringify(engine)}`}
}

function knownDisagreements(): Set<string> {
  const text = readFileSync(DOCS, 'utf8')
  const start = text.indexOf(SECTION)
  if (start < 0) throw new Error(`docs/engine.md has no "${SECTION.slice(4)}" section`)
  const end = text.indexOf('\n#', start + 5)
  const out = new Set<string>()
  for (const m of text.slice(start, end < 0 ? undefined : end).matchAll(/^- `([^`]+)` \(([^)]+)\): \S/gm)) out.add(`${m[2] as string}|${m[1] as string}`)
  return out
}

describe.skipIf(!COMPARE || FILES === null)('compare with placement: its own allocation-candidates gabbits, replayed', () => {
  it('every recorded query agrees, or it is listed with the reason in docs/engine.md', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudctl-gabbits-'))
    let records: Rec[]
    try {
      const sha = createHash('sha256')
      for (const [name, text] of [...(FILES as Map<string, string>)].sort()) {
        writeFileSync(join(dir, name), text)
        sha.update(`${name}\0${text}\0`)
      }
      records = recorded<Rec>('record_gabbits.py', [], {GABBITS_DIR: dir, GABBITS_SHA: sha.digest('hex')})
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
    const known = knownDisagreements()
    const table = new Map<string, {recorded: number; agree: number; explained: number; unexplained: number; skipped: number}>()
    const unexplained: string[] = []
    const skippedWhy = new Map<string, number>()
    const disagreeing = new Set<string>()
    for (const r of records) {
      const row = table.get(r.file) ?? {recorded: 0, agree: 0, explained: 0, unexplained: 0, skipped: 0}
      table.set(r.file, row)
      row.recorded++
      const v = replay(r)
      const key = `${r.file}|${r.name}`
      if (v.kind === 'agree') row.agree++
      else if (v.kind === 'skipped') {
        row.skipped++
        skippedWhy.set(v.reason, (skippedWhy.get(v.reason) ?? 0) + 1)
      } else if (known.has(key)) {
        row.explained++
        disagreeing.add(key)
      } else {
        row.unexplained++
        unexplained.push(`${r.file}: ${r.name}\n      ${r.url} (${r.microversion})\n      ${v.detail}`)
      }
    }
    const stale = [...known].filter((k) => !disagreeing.has(k))
    const lines = [
      '',
      "placement's allocation-candidates gabbits replayed through the engine",
      '  gabbit file                                  queries  agree  explained  unexplained  not replayed',
    ]
    for (const [f, row] of [...table].sort())
      lines.push(
        `  ${f.padEnd(44)}${String(row.recorded).padStart(8)}${String(row.agree).padStart(7)}${String(row.explained).padStart(11)}${String(row.unexplained).padStart(13)}${String(row.skipped).padStart(14)}`,
      )
    for (const [why, n] of skippedWhy) lines.push(`  not replayed, ${n}x ${why}`)
    console.log(lines.join('\n'))
    const agreed = [...table.values()].reduce((n, row) => n + row.agree, 0)
    expect(agreed).toBeGreaterThan(50)
    expect(unexplained.slice(0, 15).join('\n')).toBe('')
    expect(stale).toEqual([])
  }, 900_000)
})
