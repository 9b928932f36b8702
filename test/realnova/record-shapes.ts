/**
 * Records the blobs real nova wrote in driver_shapes.py's play into test/fixtures/real-shapes/zed.json,
 * the shapes the realistic generated cloud is made from (test/support/builders/real-shapes.ts).
 * Nova writes the rows; this only picks them out of the dump, one of each kind:
 *
 *   cd test/realnova && REALNOVA_DUMP=/tmp/shapes.json /usr/bin/python3 -m testtools.run \
 *       driver_shapes.ShapesClouds.test_production_shapes
 *   npx tsx test/realnova/record-shapes.ts /tmp/shapes.json
 *
 * Traits: the fake libvirt's host reports fewer CPU flags than a real one (a Penryn), so its trait set
 * (~46) is extended, to the 60-100 a real libvirt compute reports, with CPU-flag traits of a
 * Cascade Lake host that the installed os_traits defines; both lists are kept apart in the fixture.
 */
import {execFileSync} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {dirname} from 'node:path'
import {fileURLToPath} from 'node:url'

interface Table {
  columns: string[]
  rows: unknown[][]
}
interface Dump {
  dumped_at: string
  api: Record<string, Table>
  cells: Record<string, {name: string; tables: Record<string, Table>}>
  placement: Record<string, Table>
}

const rowsOf = (t: Table | undefined): Array<Record<string, unknown>> =>
  (t?.rows ?? []).map((r) => Object.fromEntries(t?.columns.map((c, i) => [c, r[i]]) ?? []))

/** CPU flags of a Cascade Lake server as os_traits names them (those os_traits defines are kept). */
const CASCADE_LAKE_FLAGS = [
  'ABM',
  'AVX',
  'AVX2',
  'AVX512BW',
  'AVX512CD',
  'AVX512DQ',
  'AVX512F',
  'AVX512VL',
  'AVX512VNNI',
  'BMI',
  'BMI2',
  'CLWB',
  'F16C',
  'FMA3',
  'MMX',
  'MPX',
  'PCLMULQDQ',
  'SSE',
  'SSE2',
  'SSE3',
  'SSE41',
  'SSE42',
  'SSSE3',
  'SHA',
  'FSGSBASE',
  'RDRAND',
  'ADX',
  'MOVBE',
  'POPCNT',
  'INVPCID',
  'XSAVE',
  'XSAVEOPT',
  'XSAVEC',
  'XSAVES',
  'PDPE1GB',
  'RDSEED',
  'SMAP',
  'SMEP',
  'PKU',
].map((f) => `HW_CPU_X86_${f}`)
/** Beside the CPU flags: what a libvirt compute on real hardware also reports. */
const HOST_EXTRAS = [
  'COMPUTE_STATUS_DISABLED',
  'COMPUTE_NET_VIF_MODEL_LAN9118',
  'COMPUTE_NET_VIF_MODEL_SMC91C111',
  'COMPUTE_GRAPHICS_MODEL_GOP',
  'COMPUTE_GRAPHICS_MODEL_NONE',
  'COMPUTE_STORAGE_BUS_IDE',
  'COMPUTE_SECURITY_TPM_1_2',
  'COMPUTE_SECURITY_TPM_2_0',
  'COMPUTE_ADDRESS_SPACE_PASSTHROUGH',
  'COMPUTE_ADDRESS_SPACE_EMULATED',
]

function main(): void {
  const [dumpPath, outArg] = process.argv.slice(2)
  if (!dumpPath) {
    process.stderr.write('usage: npx tsx test/realnova/record-shapes.ts DUMP.json [OUT.json]\n')
    process.exitCode = 2
    return
  }
  const out = outArg ?? fileURLToPath(new URL('../fixtures/real-shapes/zed.json', import.meta.url))
  const dump = JSON.parse(readFileSync(dumpPath, 'utf8')) as Dump
  const cell1 = Object.values(dump.cells).find((c) => c.name === 'cell1')
  if (!cell1) throw new Error('the dump has no cell1')
  const node = rowsOf(cell1.tables.compute_nodes).find((n) => n.hypervisor_hostname === 'host1')
  if (!node) throw new Error('no compute node host1 in cell1')
  const flavors = new Map(rowsOf(dump.api.flavors).map((f) => [f.id, f]))
  const specs = new Map(rowsOf(dump.api.request_specs).map((r) => [r.instance_uuid, r.spec]))
  const extras = new Map(rowsOf(cell1.tables.instance_extra).map((e) => [e.instance_uuid, e]))
  const instances: Record<string, unknown> = {}
  for (const inst of rowsOf(cell1.tables.instances)) {
    // One of each flavor (the first booted), and a server group member's request spec.
    const flavor = flavors.get(inst.instance_type_id)
    const kind = String(inst.display_name).startsWith('g') ? 'group-member' : String(flavor?.name)
    if (kind in instances) continue
    const {id: _id, created_at: _c, updated_at: _u, instance_uuid: _i, ...extra} = extras.get(inst.uuid) ?? {}
    instances[kind] = {
      flavor: flavor?.name,
      instance_uuid: inst.uuid,
      project_id: inst.project_id,
      user_id: inst.user_id,
      extra,
      request_spec: specs.get(inst.uuid),
    }
  }
  const traitNames = new Map(rowsOf(dump.placement.traits).map((t) => [t.id, String(t.name)]))
  const providers = rowsOf(dump.placement.resource_providers)
  const rp = providers.find((p) => p.name === 'host1')
  const reported = rowsOf(dump.placement.resource_provider_traits)
    .filter((t) => t.resource_provider_id === rp?.id)
    .map((t) => traitNames.get(t.trait_id) as string)
    .sort()
  const osTraits = new Set(
    JSON.parse(execFileSync('/usr/bin/python3', ['-c', 'import json, os_traits; print(json.dumps(os_traits.get_traits()))'], {encoding: 'utf8'})) as string[],
  )
  const added = [...CASCADE_LAKE_FLAGS, ...HOST_EXTRAS].filter((t) => osTraits.has(t) && !reported.includes(t) && t !== 'COMPUTE_STATUS_DISABLED')
  const versions = execFileSync('dpkg-query', ['-W', '-f', '${Package}=${Version}\\n', 'python3-nova', 'python3-placement', 'python3-os-traits'], {
    encoding: 'utf8',
  })
    .trim()
    .split('\n')
  const fixture = {
    recorded: {
      by: 'test/realnova/driver_shapes.py ShapesClouds.test_production_shapes, picked out by test/realnova/record-shapes.ts',
      packages: versions,
      dumped_at: dump.dumped_at,
      host: 'fake libvirt: 2 sockets x 3 cores x 2 threads, 96 GiB per socket (4 KiB, 16 x 1 GiB and 4096 x 2 MiB pages), cpu_shared_set 0-3,6-9, cpu_dedicated_set 4-5,10-11, reserved_host_memory_mb 8192, [libvirt] cpu_mode host-model',
    },
    compute_node: Object.fromEntries(['numa_topology', 'stats', 'cpu_info', 'supported_instances', 'pci_stats'].map((k) => [k, node[k]])),
    instances,
    traits: {reported, added_from_os_traits: added},
  }
  mkdirSync(dirname(out), {recursive: true})
  writeFileSync(out, `${JSON.stringify(fixture, null, 1)}\n`)
  process.stdout.write(`${out}: ${Object.keys(instances).length} instance kinds, ${reported.length} + ${added.length} traits\n`)
}

main()
