/**
 * Which placement provider stands for which live compute node, built once from the snapshot. Shared
 * by the audit (checks/context.ts) and the outage rule (domain/outage.ts), which repairs apply
 * without an audit behind them.
 */
import {type CloudModel} from './model.js'
import {SHARING_TRAIT} from './placement-capacity.js'
import type {ComputeNode, ResourceProvider} from './snapshot.js'

export class ProviderNodes {
  /** Live compute node by uuid (the provider uuid nova uses). */
  private readonly liveCnByUuid = new Map<string, ComputeNode>()
  /** Root providers that are not compute nodes but share their inventory via aggregates. */
  private readonly sharingProviderIds: ReadonlySet<number>
  /**
   * provider.uuid-mismatch pairs: a live compute node whose uuid has no provider, and the root
   * provider carrying its hypervisor_hostname. Other checks judge that provider as the node's, so
   * the one fault is reported once (by providers), not again as every allocation on it.
   */
  private readonly misnamedProviderOf = new Map<ComputeNode, ResourceProvider>()
  private readonly misnamedNodeOf = new Map<number, ComputeNode>()
  /** computeNodeOf by provider id, resolved once: leaks asks it for every allocation group. */
  private readonly nodeByProviderId = new Map<number, ComputeNode>()

  constructor(private readonly model: CloudModel) {
    for (const cn of model.liveComputeNodes) if (cn.uuid && !this.liveCnByUuid.has(cn.uuid)) this.liveCnByUuid.set(cn.uuid, cn)
    this.sharingProviderIds = model.providersWithTrait(SHARING_TRAIT)
    for (const cn of model.liveComputeNodes) {
      if ((cn.uuid && model.providersByUuid.has(cn.uuid)) || cn.hypervisor_hostname === null) continue
      const rp = (model.providersByName.get(cn.hypervisor_hostname) ?? []).find((p) => p.parent_provider_id === null && !this.sharingProviderIds.has(p.id))
      if (!rp || this.liveCnByUuid.has(rp.uuid)) continue
      this.misnamedProviderOf.set(cn, rp)
      this.misnamedNodeOf.set(rp.id, cn)
    }
    for (const [uuid, cn] of this.liveCnByUuid) {
      const rp = model.providersByUuid.get(uuid)
      if (rp) this.nodeByProviderId.set(rp.id, cn)
    }
    // A misnamed provider's uuid is no live node's (checked above), so these never overwrite the above.
    for (const [rpId, cn] of this.misnamedNodeOf) this.nodeByProviderId.set(rpId, cn)
  }

  isSharing(rp: ResourceProvider): boolean {
    return this.sharingProviderIds.has(rp.id)
  }

  /** The provider nova uses for a compute node: same uuid. */
  providerOf(cn: ComputeNode): ResourceProvider | undefined {
    return (cn.uuid ? this.model.providersByUuid.get(cn.uuid) : undefined) ?? this.misnamedProviderOf.get(cn)
  }

  /** The live compute node a (root) provider stands for. */
  computeNodeOf(rp: ResourceProvider): ComputeNode | undefined {
    // Keyed by id: the snapshot's provider rows are the only ones checks pass in.
    return this.model.providersById.get(rp.id) === rp ? this.nodeByProviderId.get(rp.id) : (this.liveCnByUuid.get(rp.uuid) ?? this.misnamedNodeOf.get(rp.id))
  }
}
