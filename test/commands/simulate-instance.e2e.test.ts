/**
 * `simulate boot --instance UUID` through the built CLI (npm run build first): a builder cloud with
 * request specs, each instance's spec edited the way nova would have recorded another request, and the
 * replay checked against what that spec asks.
 */
import {mkdtemp} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {writeSnapshotFile} from '../../src/lib/snapshot/file.js'
import {CloudBuilder, formatTs} from '../support/builders.js'
import {cloudctl} from '../support/cli.js'
import {createTestCloud, seedSnapshot, type TestCloud} from '../support/db.js'

type Data = Record<string, unknown>

/** Edit the RequestSpec data of one instance, as nova would have written another request. */
function editSpec(s: Snapshot, uuid: string, edit: (d: Data) => void): void {
  const row = s.nova_api.request_specs?.find((r) => r.instance_uuid === uuid)
  if (!row) throw new Error(`no request spec for ${uuid}`)
  const v = JSON.parse(row.spec) as {'nova_object.data': Data}
  edit(v['nova_object.data'])
  row.spec = JSON.stringify(v)
}

const flavorData = (d: Data) => (d.flavor as {'nova_object.data': Data})['nova_object.data']

let file = ''
let cloudSnapshot: Snapshot
let bare = ''
const ids: Record<string, string> = {}
const nodeUuid: Record<string, string> = {}

beforeAll(async () => {
  // Services report as of now: the live case reads them at the real clock (service_down_time 60 s).
  const b = new CloudBuilder({seed: 11, now: formatTs(Date.now())})
  b.addCell('cell1')
  b.addFlavor({name: 'm1.small', vcpus: 1, memory_mb: 2048, root_gb: 10})
  for (const host of ['cmp-1', 'cmp-2']) b.addHost('cell1', {host, vcpus: 8, memory_mb: 16384, local_gb: 200})
  b.addHost('cell1', {host: 'cmp-3', vcpus: 8, memory_mb: 16384, local_gb: 200, az: 'az-x'})
  for (const name of ['resized', 'forced', 'ignored', 'zoned', 'traited']) ids[name] = b.addInstance('cmp-1', 'm1.small', {az: null}).row.uuid
  const s = b.build()
  for (const cn of s.nova.compute_nodes) nodeUuid[cn.host ?? ''] = cn.uuid ?? ''
  // The flavor as it was at boot: far larger than today's m1.small.
  editSpec(s, ids.resized, (d) => {
    Object.assign(flavorData(d), {vcpus: 64, memory_mb: 2048})
  })
  editSpec(s, ids.forced, (d) => {
    d.force_hosts = ['cmp-2']
  })
  editSpec(s, ids.ignored, (d) => {
    d.ignore_hosts = ['cmp-1', 'CMP-2']
  })
  editSpec(s, ids.zoned, (d) => {
    d.availability_zone = 'az-x'
    d.num_instances = 2
    // a boot with two QoS ports: what nova keeps of them is the same_subtree of their groups
    d.request_level_params = {
      'nova_object.name': 'RequestLevelParams',
      'nova_object.namespace': 'nova',
      'nova_object.version': '1.1',
      'nova_object.data': {root_required: [], root_forbidden: [], same_subtree: [['port-a-bw', 'port-a-pps']]},
    }
  })
  editSpec(s, ids.traited, (d) => {
    const props = ((d.image as {'nova_object.data': Data})['nova_object.data'].properties as {'nova_object.data': Data})['nova_object.data']
    props.traits_required = ['CUSTOM_NOWHERE']
  })
  cloudSnapshot = s
  const dir = await mkdtemp(join(tmpdir(), 'cloudctl-replay-'))
  file = join(dir, 'cloud.json')
  await writeSnapshotFile(s, file)
  const without = structuredClone(s)
  delete without.nova_api.request_specs
  bare = join(dir, 'no-specs.json')
  await writeSnapshotFile(without, bare)
}, 300_000)

interface Doc {
  placed_all: boolean
  query: string
  instances: Array<{host: string | null}>
  verdicts: Array<{host: string; stage: string; label: string}>
  recorded_request: {
    flavor: {vcpus: number; name: string}
    not_simulated: string[]
    force_hosts: string[]
    ignore_hosts: string[]
    availability_zone: string | null
    num_instances: number
    image: {properties: Record<string, string>}
  }
}

async function replay(uuid: string, ...extra: string[]): Promise<{exitCode: number; doc: Doc}> {
  const r = await cloudctl(['simulate', 'boot', '--snapshot', file, '--instance', uuid, '--json', ...extra])
  return {exitCode: r.exitCode, doc: JSON.parse(r.stdout) as Doc}
}

// First: the builder's clock is the time of the build, and nova-compute must still look up when read live.
describe('simulate boot --instance on live databases', () => {
  let cloud: TestCloud | undefined

  beforeAll(async () => {
    cloud = await createTestCloud('e2e_replay')
    await seedSnapshot(cloudSnapshot, cloud)
  }, 120_000)

  afterAll(async () => {
    await cloud?.drop()
  })

  it('reads nova_api.request_specs for the replay (capture skips them otherwise)', async () => {
    const live = ['--api-db', cloud!.apiUrl, '--placement-db', cloud!.placementUrl]
    const r = await cloudctl(['simulate', 'boot', ...live, '--instance', ids.ignored, '--json'])
    expect(r.exitCode, r.stderr).toBe(0)
    const doc = JSON.parse(r.stdout) as Doc
    expect(doc.recorded_request.ignore_hosts).toEqual(['cmp-1', 'CMP-2'])
    expect(doc.instances.map((i) => i.host)).toEqual(['cmp-3'])
    const unknown = await cloudctl(['simulate', 'boot', ...live, '--instance', '00000000-0000-4000-8000-00000000dead'])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('no request spec for instance 00000000-0000-4000-8000-00000000dead')
    expect(unknown.stderr).not.toContain('--request-specs')
  })
})

describe('simulate boot --instance', () => {
  it("asks for the flavor as recorded, not for today's flavor of that name", async () => {
    const {exitCode, doc} = await replay(ids.resized)
    expect(exitCode).toBe(3)
    expect(doc.placed_all).toBe(false)
    expect(doc.recorded_request.flavor).toMatchObject({name: 'm1.small', vcpus: 64})
    expect(decodeURIComponent(doc.query)).toContain('VCPU:64')
    const today = await cloudctl(['simulate', 'boot', '--snapshot', file, '--flavor', 'm1.small', '--json'])
    expect(today.exitCode).toBe(0)
    const human = await cloudctl(['simulate', 'boot', '--snapshot', file, '--instance', ids.resized])
    expect(human.exitCode).toBe(3)
    expect(human.stdout).toContain(`Replaying the request nova recorded for instance ${ids.resized}`)
    expect(human.stdout).toContain('flavor m1.small as recorded: 64 vCPU')
    expect(human.stdout).toContain('note: the instance still holds allocations on cmp-1; the replay counts them as used')
  })

  it('force_hosts targets the placement query at that node and lands there', async () => {
    const {exitCode, doc} = await replay(ids.forced)
    expect(exitCode).toBe(0)
    expect(doc.recorded_request.force_hosts).toEqual(['cmp-2'])
    expect(decodeURIComponent(doc.query)).toContain(`in_tree=${nodeUuid['cmp-2']}`)
    expect(doc.instances.map((i) => i.host)).toEqual(['cmp-2']) // Forced hosts skip the host filters, as nova's host manager does: a capability no host has still lands.
    const picky = ['--extra-spec', 'capabilities:hypervisor_type=s== NOPE']
    const forced = await replay(ids.forced, ...picky)
    expect(forced.exitCode).toBe(0)
    expect(forced.doc.instances.map((i) => i.host)).toEqual(['cmp-2'])
    const unforced = await cloudctl(['simulate', 'boot', '--snapshot', file, '--instance', ids.zoned, ...picky])
    expect(unforced.exitCode).toBe(3)
    expect(unforced.stdout).toContain('ComputeCapabilitiesFilter')
  })

  it('ignore_hosts drops those hosts (case-insensitively) before the filters', async () => {
    const {exitCode, doc} = await replay(ids.ignored, '--explain')
    expect(exitCode).toBe(0)
    expect(doc.instances.map((i) => i.host)).toEqual(['cmp-3'])
    const ignored = doc.verdicts
      .filter((v) => v.label === 'ignored host')
      .map((v) => v.host)
      .sort()
    expect(ignored).toEqual(['cmp-1', 'cmp-2'])
  })

  it('keeps the availability zone and num_instances; request flags beside --instance override', async () => {
    const {exitCode, doc} = await replay(ids.zoned)
    expect(exitCode).toBe(0)
    expect(doc.recorded_request).toMatchObject({availability_zone: 'az-x', num_instances: 2})
    // the port groups are not in the spec: the query names no same_subtree, and the replay says so
    expect(decodeURIComponent(doc.query)).not.toContain('same_subtree')
    expect(doc.recorded_request.not_simulated).toEqual([
      "ports' resource requests and same_subtree=port-a-bw,port-a-pps (nova reads the port groups from neutron; the spec does not keep them)",
    ])
    expect(doc.instances.map((i) => i.host)).toEqual(['cmp-3', 'cmp-3'])
    const other = await replay(ids.zoned, '--image-property', 'trait:CUSTOM_NOWHERE=required')
    expect(other.exitCode).toBe(3)
    expect(decodeURIComponent(other.doc.query)).toContain('CUSTOM_NOWHERE')
  })

  it('image traits_required become required traits of the query', async () => {
    const {exitCode, doc} = await replay(ids.traited)
    expect(exitCode).toBe(3)
    expect(doc.recorded_request.image.properties['trait:CUSTOM_NOWHERE']).toBe('required')
    expect(decodeURIComponent(doc.query)).toContain('CUSTOM_NOWHERE')
  })

  it('an unknown uuid, a typo and a snapshot without request specs are exit 2 with a hint', async () => {
    const unknown = await cloudctl(['simulate', 'boot', '--snapshot', file, '--instance', '00000000-0000-4000-8000-00000000dead'])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('no request spec for instance 00000000-0000-4000-8000-00000000dead')
    expect(unknown.stderr).toContain('Hint:')
    expect(unknown.stderr).not.toMatch(/\n\s+at /)
    const typo = ids.forced.slice(0, -1) + (ids.forced.endsWith('0') ? '1' : '0')
    const near = await cloudctl(['simulate', 'boot', '--snapshot', file, '--instance', typo, '--json'])
    expect(near.exitCode).toBe(2)
    expect((JSON.parse(near.stdout) as {error: {hint: string}}).error.hint).toContain(`Did you mean ${ids.forced}?`)
    const none = await cloudctl(['simulate', 'boot', '--snapshot', bare, '--instance', ids.forced])
    expect(none.exitCode).toBe(2)
    expect(none.stderr).toContain('--request-specs')
    const both = await cloudctl(['simulate', 'boot', '--snapshot', file, '--instance', ids.forced, '--flavor', 'm1.small'])
    expect(both.exitCode).toBe(2)
  })
})
