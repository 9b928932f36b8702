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
    if (list === null) return live.some((i) => i.host === cn.host && i.node === cn.hypervisor_hostname)
    if (ownList !== undefined) return ownList === list
    for (const i of live) for (let k = 0; k < list.length; k++) if (list[k] === i) return true
    return false
  }

  /**
   * A provider with no live compute node (its node row or nova-compute service was deleted while the
   * instance kept running) still stands for that node: the node rows of its uuid, deleted ones
   * included, or without any, the node it is named after. An instance there holds its allocation where
   * nova put it; provider.stale tells the story of the provider, and leaks does not repeat it.
   */
  standsForNodeOf(rp: ResourceProvider, inst: Instance): boolean {
    const rows = this.model.computeNodesByUuid.get(rp.uuid)
    if (rows) return rows.some((cn) => cn.host === inst.host && cn.hypervisor_hostname === inst.node)
    return rp.name !== null && inst.host !== null && inst.node === rp.name
  }

  /** Whether the migration's source or destination is this provider's node. */
  touches(m: Migration, cn: ComputeNode | undefined, rp: ResourceProvider): boolean {
    return cn
      ? (m.source_compute === cn.host && m.source_node === cn.hypervisor_hostname) || (m.dest_compute === cn.host && m.dest_node === cn.hypervisor_hostname)
      : rp.name !== null && (m.source_node === rp.name || m.dest_node === rp.name)
  }

  /** Aggregates of the compute node providers an instance lives on or is moving between. */
  instanceAggregates(inst: Instance): Set<string> {
    const out = new Set<string>()
    const addNode = (host: string | null, node: string | null) => {
      const cn = this.ctx.liveComputeNodeAt(host, node)
      const rp = cn && this.ctx.providerOf(cn)
      if (rp) for (const a of this.model.aggregatesOf(rp.id)) out.add(a)
    }
    addNode(inst.host, inst.node)
    for (const m of this.ctx.inProgressByInstance.get(inst.uuid) ?? []) {
      addNode(m.source_compute, m.source_node)
      addNode(m.dest_compute, m.dest_node)
    }
    return out
  }

  sharesWith(aggs: Set<string>, rp: ResourceProvider): boolean {
    for (const a of this.model.aggregatesOf(rp.id)) if (aggs.has(a)) return true
    return false
  }
}
