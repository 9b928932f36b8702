import type {Finding} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode, Instance} from '../domain/snapshot.js'
import {AuditContext} from './context.js'
import {jsonTopLevel} from './json-scan.js'

const READABLE = {ok: true} as const

interface Unreadable {
  table: 'compute_nodes' | 'instance_extra'
  column: string
  cell_uuid: string
  subject: string
  row_id: number
  host: string | null
  node: string | null
  instance_uuid?: string
  error: string
}

/**
 * A blob nova wrote that cannot be read is a finding: the checks that need it skip that row.
 * Same rows and readers as CloudModel.blobErrors(), with instance blobs parsed once per distinct text.
 */
export function checkBlobs(model: CloudModel, ctx: AuditContext = new AuditContext(model)): Finding[] {
  const bad: Unreadable[] = []
  // Row descriptions are built only for the rare bad row: this loop visits every live instance.
  const cnAt = (cn: ComputeNode) => ({cell_uuid: cn.cell_uuid, subject: cn.uuid ?? String(cn.id), row_id: cn.id, host: cn.host, node: cn.hypervisor_hostname})
  const instAt = (inst: Instance) => ({cell_uuid: inst.cell_uuid, subject: inst.uuid, row_id: inst.id, host: inst.host, node: inst.node, instance_uuid: inst.uuid})
  for (const cn of model.liveComputeNodes) {
    const n = ctx.hostNumaTopology(cn)
    if (!n.ok) bad.push({table: 'compute_nodes', column: 'numa_topology', ...cnAt(cn), error: n.error})
    // Only readability matters here (the engine parses stats when it needs them): a scan that builds
    // nothing decides the common case, the real parser words any failure.
    const top = cn.stats === null || cn.stats === '' ? 'null' : jsonTopLevel(cn.stats)
    const st = top === 'object' || top === 'null' ? READABLE : model.statsReadable(cn)
    if (!st.ok) bad.push({table: 'compute_nodes', column: 'stats', ...cnAt(cn), error: st.error})
  }
  for (const inst of model.snapshot.nova.instances) {
    if (inst.deleted !== 0) continue
    const n = ctx.instanceNumaTopology(inst)
    if (!n.ok) bad.push({table: 'instance_extra', column: 'numa_topology', ...instAt(inst), error: n.error})
    const f = ctx.instanceFlavors(inst)
    if (!f.ok) bad.push({table: 'instance_extra', column: 'flavor', ...instAt(inst), error: f.error})
  }
  return bad.map((e) => ({
    check: 'snapshot',
    code: 'snapshot.unreadable-blob',
    severity: 'error',
    subject: {
      cell: model.cellLabel(e.cell_uuid),
      cell_uuid: e.cell_uuid,
      ...(e.host === null ? {} : {host: e.host}),
      ...(e.node === null ? {} : {node: e.node}),
      ...(e.instance_uuid ? {instance_uuid: e.instance_uuid} : {}),
    },
    message: `${e.table}.${e.column} of ${e.subject} cannot be read (${e.error}); checks that need it skip this row.`,
    evidence: {table: e.table, column: e.column, subject: e.subject, row_id: e.row_id, error: e.error},
  }))
}
