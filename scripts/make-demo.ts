/**
 * Writes examples/demo-cloud.yaml: a small, realistic cloud (2 cells + cell0, 12 hosts, ~60
 * instances, az1/az2, pinned-CPU hosts) carrying exactly one of each incident from the seeds
 * (/work/shared/seeds 004 and 000). examples/README.md lists them. Run: npx tsx scripts/make-demo.ts
 */
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {CELL0_UUID, type Instance} from '../src/lib/domain/snapshot.js'
import {writeSnapshotFile} from '../src/lib/snapshot/file.js'
import {CloudBuilder} from '../test/support/builders.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const b = new CloudBuilder({seed: 2024, now: '2024-05-14 09:30:00'})

b.addCell('cell1')
b.addCell('cell2')
for (const c of b.cells) {
  // what `cloudctl snapshot capture` stores: the real connection with the password redacted
  if (c.is_cell0) c.database_connection = 'mysql+pymysql://nova:***@10.0.0.5/nova_cell0?charset=utf8'
  else c.database_connection = `mysql+pymysql://nova:***@10.0.0.5/nova_${c.name}?charset=utf8`
  if (!c.is_cell0) c.transport_url = `rabbit://nova:***@10.0.0.11:5672,nova:***@10.0.0.12:5672/${c.name}`
}

b.addFlavor({name: 'm1.tiny', flavorid: '1', vcpus: 1, memory_mb: 512, root_gb: 1})
b.addFlavor({name: 'm1.small', flavorid: '2', vcpus: 1, memory_mb: 2048, root_gb: 20})
b.addFlavor({name: 'm1.medium', flavorid: '3', vcpus: 2, memory_mb: 4096, root_gb: 40})
b.addFlavor({name: 'm1.large', flavorid: '4', vcpus: 4, memory_mb: 8192, root_gb: 80})
b.addFlavor({name: 'm1.xlarge', flavorid: '5', vcpus: 8, memory_mb: 16384, root_gb: 160})
b.addFlavor({name: 'm1.pinned', flavorid: '6', vcpus: 4, memory_mb: 8192, root_gb: 40, extra_specs: {'hw:cpu_policy': 'dedicated'}})
b.addFlavor({name: 'r1.large', flavorid: '7', vcpus: 4, memory_mb: 32768, root_gb: 40, description: 'memory optimised'})

const shared = {vcpus: 32, memory_mb: 131072, local_gb: 1800, cpu_allocation_ratio: 4, ram_allocation_ratio: 1.5, disk_allocation_ratio: 1}
const pinned = {vcpus: 16, memory_mb: 65536, local_gb: 900, cpu_dedicated_set: '4-7,12-15', cpu_allocation_ratio: 4, ram_allocation_ratio: 1}

// cell1 / az1
for (const h of ['cmp-r1-01', 'cmp-r1-02', 'cmp-r1-03']) b.addHost('cell1', {host: h, ...shared, az: 'az1'})
const dead = b.addHost('cell1', {host: 'cmp-r1-04', ...shared, down: true, forced_down: true})
b.addHost('cell1', {host: 'pin-r1-01', ...pinned, az: 'az1'})
b.addHost('cell1', {host: 'pin-r1-02', ...pinned, az: 'az1'})
// cell2 / az2
for (const h of ['cmp-r2-01', 'cmp-r2-02', 'cmp-r2-03', 'cmp-r2-04']) b.addHost('cell2', {host: h, ...shared, az: 'az2'})
const renamed = b.addHost('cell2', {host: 'cmp-r2-05.cloud.example.com', ...shared, az: 'az2'})
b.addHost('cell2', {host: 'pin-r2-01', ...pinned, az: 'az2'})

const projects = ['3f2a9c1e5b7d4e8f9a0b1c2d3e4f5a6b', '8d1e2f3a4b5c4d6e8f9a0b1c2d3e4f50', 'c0ffee00b1a24c3d8e9f0a1b2c3d4e5f']
const users = ['a1b2c3d4e5f64a7b8c9d0e1f2a3b4c5d', 'f0e1d2c3b4a54968a7b6c5d4e3f2a1b0', '0a1b2c3d4e5f4a6b7c8d9e0f1a2b3c4d']
let n = 0
const boot = (host: string, flavor: string, extra: {boot_from_volume?: boolean} = {}) => {
  const p = n % projects.length
  n++
  return b.addInstance(host, flavor, {project: projects[p], user: users[p], display_name: `${flavor.split('.')[0]}-${String(n).padStart(3, '0')}`, ...extra})
}
const mix = ['m1.small', 'm1.medium', 'm1.large', 'm1.small', 'm1.tiny', 'm1.xlarge', 'm1.medium']
const steady = ['cmp-r1-01', 'cmp-r1-02', 'cmp-r1-03', 'cmp-r2-01', 'cmp-r2-02', 'cmp-r2-04']
for (let i = 0; i < 50; i++) boot(steady[i % steady.length], mix[i % mix.length], {boot_from_volume: i % 5 === 0})

// pinned hosts: pin-r1-01 and pin-r2-01 are full (one 4-vCPU guest per NUMA cell)
for (const h of ['pin-r1-01', 'pin-r1-01', 'pin-r2-01', 'pin-r2-01']) boot(h, 'm1.pinned')

// ---- incident: host cmp-r1-04 died (seed 004)
const evacuated = boot('cmp-r1-04', 'm1.large')
const deletedWhileDown = boot('cmp-r1-04', 'm1.medium')
const evacuation = b.addMigration(evacuated.row.uuid, {type: 'evacuation', status: 'done', dest: 'cmp-r1-01'})
b.addAllocations(evacuated.row.uuid, 'cmp-r1-04', b.resourcesOf(evacuated.flavor, false).resources)
b.deleteInstance(deletedWhileDown.row.uuid, {keepAllocations: true, keepTracked: true})
// `openstack compute service delete`: placement refuses to drop a provider with allocations
b.deleteComputeService('cmp-r1-04', {keepProvider: true})

// ---- incident: pinned_cpus of pin-r1-02 stayed full after its guests were deleted (seed 004)
for (const c of b.numaOf('pin-r1-02')) for (const p of c.pcpuset) c.pinned.add(p)

// ---- incident: negative usage columns (seed 000): cmp-r2-03 runs more RAM than it has, within ram_allocation_ratio 1.5
while (b.hostRec('cmp-r2-03').memoryUsed + 512 <= 131072 + 20000) boot('cmp-r2-03', 'r1.large')

// ---- incident: instance alive in cell1 and in cell0 (seed 004)
const twin = boot('cmp-r1-02', 'm1.small')
const copy: Instance = {
  ...twin.row,
  cell_uuid: CELL0_UUID,
  id: b.nextInstanceId(),
  host: null,
  node: null,
  vm_state: 'error',
  power_state: 0,
  launched_at: null,
}
b.pushInstanceRow(copy)

// ---- incident: hostname changed to its FQDN, compute node recreated under a new uuid (seed 004)
const oldProvider = renamed.rp.row.uuid
const {current: newNode} = b.recreateComputeNode(renamed.node)

const snapshot = b.build({source: 'examples/demo-cloud.yaml (scripts/make-demo.ts)'})
await writeSnapshotFile(snapshot, join(root, 'examples/demo-cloud.yaml'))

const incidents = {
  host_died: {host: dead.host, provider_uuid: dead.rp.row.uuid, compute_node_uuid: dead.cn.uuid, service_id: dead.service.id},
  evacuated: {instance_uuid: evacuated.row.uuid, migration_uuid: evacuation.row.uuid, now_on: 'cmp-r1-01'},
  deleted_while_down: {instance_uuid: deletedWhileDown.row.uuid},
  pinned_leak: {host: 'pin-r1-02', provider_uuid: b.provider('pin-r1-02').row.uuid},
  negative_free: {host: 'cmp-r2-03', free_ram_mb: b.hostRec('cmp-r2-03').cn.free_ram_mb, provider_uuid: b.provider('cmp-r2-03').row.uuid},
  duplicate: {instance_uuid: twin.row.uuid, host: 'cmp-r1-02'},
  uuid_mismatch: {node: renamed.node, compute_node_uuid: newNode.uuid, old_compute_node_uuid: oldProvider, provider_uuid: oldProvider},
  instances: snapshot.nova.instances.filter((i) => i.deleted === 0 && i.cell_uuid !== CELL0_UUID).length,
}
writeFileSync(join(root, 'examples/demo-incidents.json'), `${JSON.stringify(incidents, null, 2)}\n`)
process.stderr.write(`${JSON.stringify(incidents, null, 2)}\n`)
