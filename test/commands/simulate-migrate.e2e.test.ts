/**
 * `simulate migrate --instance UUID [--host H] [--live]` through the built CLI (npm run build first)
 * on a builder cloud whose hosts leave one destination: the source host excluded, a host with room
 * for exactly the moving instance, a full host, a host in another cell.
 */
import {mkdtemp} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {CloudBuilder} from '../support/builders.js'
import {cloudctl} from '../support/cli.js'

const ids: Record<string, string> = {}
let file = ''
let sameHost = ''
let olderHypervisor = ''

interface Doc {
  kind: string
  destination: {host: string} | null
  no_valid_host: boolean
  same_host_allowed: boolean
  checks: Array<{name: string; ok: boolean}>
  attempts: Array<{ignore_hosts: string[]; chosen: string | null; check: {ok: boolean; detail: string} | null}>
  source_allocations: Array<{provider: string; resource_class: string; amount: number}>
  simulation: {query: string; verdicts: Array<{host: string; stage: string; label: string}>} | null
}

function cloud(): Snapshot {
  const b = new CloudBuilder({seed: 7})
  b.addCell('cell1')
  b.addCell('cell2')
  b.addFlavor({name: 'm1.big', vcpus: 4, memory_mb: 8192, root_gb: 10})
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 2048, root_gb: 10})
  b.addFlavor({name: 'm1.fill', vcpus: 1, memory_mb: 7936, root_gb: 10})
  // 24576 MB, 512 reserved, ratio 1.0: 24064 MB to place.
  for (const host of ['cmp-1', 'cmp-2', 'cmp-3']) b.addHost('cell1', {host, vcpus: 16, memory_mb: 24576, local_gb: 500, ram_allocation_ratio: 1.0})
  b.addHost('cell2', {host: 'cmp-9', vcpus: 16, memory_mb: 24576, local_gb: 500, ram_allocation_ratio: 1.0})
  ids.big = b.addInstance('cmp-1', 'm1.big', {az: null}).row.uuid
  ids.stopped = b.addInstance('cmp-1', 'm1.small', {az: null, vm_state: 'stopped', power_state: 4}).row.uuid
  // cmp-2 keeps exactly 8192 MB: the big instance fits there once, counted only for its new claim.
  for (let i = 0; i < 2; i++) b.addInstance('cmp-2', 'm1.fill', {az: null})
  for (let i = 0; i < 3; i++) b.addInstance('cmp-3', 'm1.fill', {az: null})
  return b.build()
}

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cloudctl-migrate-'))
  const s = cloud()
  file = join(dir, 'cloud.json')
  await writeSnapshotFile(s, file)
  // The source's provider reports COMPUTE_SAME_HOST_COLD_MIGRATE: the source stays a candidate.
  const same = structuredClone(s)
  const rp = same.placement.resource_providers.find((p) => p.name === 'cmp-1')!
  const traitId = Math.max(0, ...same.placement.traits.map((t) => t.id)) + 1
  same.placement.traits.push({id: traitId, name: 'COMPUTE_SAME_HOST_COLD_MIGRATE'})
  same.placement.resource_provider_traits.push({resource_provider_id: rp.id, trait_id: traitId})
  sameHost = join(dir, 'same-host.json')
  await writeSnapshotFile(same, sameHost)
  const older = structuredClone(s)
  for (const cn of older.nova.compute_nodes) cn.hypervisor_version = cn.host === 'cmp-2' ? 4002000 : 6002000
  olderHypervisor = join(dir, 'older.json')
  await writeSnapshotFile(older, olderHypervisor)
}, 300_000)

async function migrate(snapshot: string, ...args: string[]): Promise<{exitCode: number; doc: Doc; stderr: string}> {
  const r = await cloudctl(['simulate', 'migrate', '--snapshot', snapshot, '--json', ...args])
  return {exitCode: r.exitCode, doc: JSON.parse(r.stdout) as Doc, stderr: r.stderr}
}

describe('simulate migrate', () => {
  it('cold: the source is excluded, the other cell is not searched, the full host fails placement; the exact fit wins', async () => {
    const {exitCode, doc} = await migrate(file, '--instance', ids.big, '--explain')
    expect(exitCode).toBe(0)
    expect(doc.kind).toBe('cold')
    expect(doc.destination?.host).toBe('cmp-2')
    expect(doc.attempts[0]?.ignore_hosts).toEqual(['cmp-1'])
    const by = Object.fromEntries(doc.simulation!.verdicts.map((v) => [v.host, v]))
    expect(by['cmp-1']).toMatchObject({stage: 'requested_destination', label: 'the source host'})
    expect(by['cmp-9']).toMatchObject({stage: 'host_state', label: 'in another cell'})
    expect(by['cmp-3']?.stage).toBe('placement')
    expect(by['cmp-2']?.stage).toBe('selected')
    // the move holds the instance's own allocation on the source; the destination is asked for one claim
    expect(doc.source_allocations).toContainEqual({provider: 'cmp-1', resource_class: 'MEMORY_MB', amount: 8192})
    expect(decodeURIComponent(doc.simulation!.query)).toContain('MEMORY_MB:8192')
    const human = await cloudctl(['simulate', 'migrate', '--snapshot', file, '--instance', ids.big, '--why', 'cmp-1'])
    expect(human.exitCode).toBe(0)
    expect(human.stdout).toContain('ignore_hosts cmp-1: the source host is never a destination')
    expect(human.stdout).toMatch(/cmp-1: \[requested_destination\] the source host of the move/)
    expect(human.stdout).toContain(`Destination: cold migration of ${ids.big} from cmp-1 to cmp-2`)
  })

  it('--host: a full destination is NoValidHost (exit 3), the source host is refused by nova-api (exit 2)', async () => {
    const full = await migrate(file, '--instance', ids.big, '--host', 'cmp-3')
    expect(full.exitCode).toBe(3)
    expect(full.doc.no_valid_host).toBe(true)
    expect(decodeURIComponent(full.doc.simulation!.query)).toMatch(/in_tree=/)
    const self = await cloudctl(['simulate', 'migrate', '--snapshot', file, '--instance', ids.big, '--host', 'cmp-1'])
    expect(self.exitCode).toBe(2)
    expect(self.stdout).toMatch(/refused {2}not the source host \(nova-api, 400\): CannotMigrateToSameHost/)
    expect(self.stderr).toMatch(/^Error: nova refuses the cold migration of .*CannotMigrateToSameHost/m)
    expect(self.stderr).toMatch(/^Hint: /m)
  })

  it('a same-host cold migration is allowed when the source provider says so (and the spread weigher then prefers it)', async () => {
    const {exitCode, doc} = await migrate(sameHost, '--instance', ids.big, '--explain')
    expect(exitCode).toBe(0)
    expect(doc.same_host_allowed).toBe(true)
    expect(doc.attempts[0]?.ignore_hosts).toEqual([])
    expect(doc.destination?.host).toBe('cmp-1')
  })

  it('--live: the state checks (exit 2), and a destination with an older hypervisor is retried without it (exit 3 when none is left)', async () => {
    const stopped = await migrate(file, '--instance', ids.stopped, '--live')
    expect(stopped.exitCode).toBe(2)
    expect(stopped.doc).toMatchObject({error: {code: 'MigrationRefused'}})
    const cold = await migrate(file, '--instance', ids.stopped)
    expect(cold.exitCode).toBe(0)
    const live = await migrate(file, '--instance', ids.big, '--live')
    expect(live.exitCode).toBe(0)
    expect(live.doc.destination?.host).toBe('cmp-2')
    const older = await migrate(olderHypervisor, '--instance', ids.big, '--live')
    expect(older.exitCode).toBe(3)
    expect(older.doc.attempts.map((a) => a.chosen)).toEqual(['cmp-2', null])
    expect(older.doc.attempts[0]?.check).toMatchObject({ok: false})
    expect(older.doc.attempts[1]?.ignore_hosts).toEqual(['cmp-1', 'cmp-2'])
    // a cold migration does not make that check
    expect((await migrate(olderHypervisor, '--instance', ids.big)).doc.destination?.host).toBe('cmp-2')
  })

  it('an unknown instance and a missing --instance are usage errors', async () => {
    const unknown = await cloudctl(['simulate', 'migrate', '--snapshot', file, '--instance', '00000000-0000-4000-8000-00000000dead'])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('no request spec for instance 00000000-0000-4000-8000-00000000dead')
    const missing = await cloudctl(['simulate', 'migrate', '--snapshot', file])
    expect(missing.exitCode).toBe(2)
    expect(missing.stderr).toMatch(/instance/)
  })
})
