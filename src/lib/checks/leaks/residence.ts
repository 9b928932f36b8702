/**
 * Where a consumer may rightly hold allocations: the node an instance lives on (or the provider that
 * still stands for it), either end of a migration in progress, or a sharing provider in an aggregate
 * of those nodes. Answers by identity against the model's per-node instance lists where it can.
 */
import type {CloudModel} from '../../domain/model.js'
import type {ComputeNode, Instance, Migration, ResourceProvider} from '../../domain/snapshot.js'
import type {AuditContext} from '../context.js'

export class Residence {
  private readonly model: CloudModel
  private readonly residents = new Map<ComputeNode, readonly Instance[] | null>()

  constructor(private readonly ctx: AuditContext) {
    this.model = ctx.model
  }

  /**
   * Whether one of the rows lives on the node (host and node equal). The node's list of live
   * instances answers by identity, without reading each row's host and node strings: membership
   * means equal nodeKey, which is equal host and node when both are non-empty and hold no NUL.
   * A consumer with a single instance row knows that row's list (ctx.instanceRows): one comparison.
   */
  livesOn(live: readonly Instance[], cn: ComputeNode, ownList: readonly Instance[] | undefined): boolean {
    let list = this.residents.get(cn)
    if (list === undefined) {
      const exact = cn.host && cn.hypervisor_hostname && !cn.host.includes('\u0000') && !cn.hypervisor_hostname.includes('\u0000')
      this.residents.set(cn, (list = exact ? this.model.instancesOnNode(cn.host, cn.hypervisor_hostname) : null))
    }
    if (list === null) return live.some((i) => this.isOn(i, cn))
    if (ownList !== undefined) return ownList === list
    for (let j = 0; j < live.length; j++) for (let k = 0; k < list.length; k++) if (list[k] === live[j]) return true
    return false
  }

  /** An instance on a node: by compute_id where it names a live node (2023.2+), else by its names (Zed). */
  private isOn(inst: Instance, cn: ComputeNode): boolean {
    const byId = this.model.liveComputeNodeById(inst.cell_uuid, inst.compute_id)
    return byId === undefined ? inst.host === cn.host && inst.node === cn.hypervisor_hostname : byId === cn
  }

  /**
   * A provider with no live compute node (its node row or nova-compute service was deleted while the
   * instance kept running) still stands for that node: the node rows of its uuid, deleted ones
   * included, or without any, the node it is named after. An instance there holds its allocation where
   * nova put it; provider.stale tells the story of the provider, and leaks does not repeat it.
   */
  standsForNodeOf(rp: ResourceProvider, inst: Instance): boolean {
    const rows = this.model.computeNodesByUuid.get(rp.uuid)
    // A compute_id names the node row itself (deleted ones included); without one, the names decide.
    if (rows && inst.compute_id != null) return rows.some((cn) => cn.cell_uuid === inst.cell_uuid && cn.id === inst.compute_id)
    if (rows) return rows.some((cn) => cn.host === inst.host && cn.hypervisor_hostname === inst.node)
    return rp.name !== null && inst.host !== null && inst.node === rp.name
  }

  /** Whether the migration's source or destination is this provider's node. */
  touches(m: Migration, cn: ComputeNode | undefined, rp: ResourceProvider): boolean {
    return cn ? this.ctx.movesFrom(m, cn) || this.ctx.movesTo(m, cn) : rp.name !== null && (m.source_node === rp.name || m.dest_node === rp.name)
  }

  /** Aggregates of the compute node providers an instance lives on or is moving between. */
  instanceAggregates(inst: Instance): Set<string> {
    const out = new Set<string>()
    const addNode = (cn: ComputeNode | undefined) => {
      const rp = cn && this.ctx.providerOf(cn)
      if (rp) for (const a of this.model.aggregatesOf(rp.id)) out.add(a)
    }
    addNode(this.model.nodeOfInstance(inst))
    for (const m of this.ctx.inProgressByInstance.get(inst.uuid) ?? []) {
      addNode(this.ctx.liveComputeNodeAt(m.source_compute, m.source_node))
      addNode(this.model.migrationDestNode(m))
    }
    return out
  }

  sharesWith(aggs: Set<string>, rp: ResourceProvider): boolean {
    for (const a of this.model.aggregatesOf(rp.id)) if (aggs.has(a)) return true
    return false
  }
}
