import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import {capacityOf, floatRead} from '../../domain/placement-capacity.js'
import {isIronicNode} from '../ironic.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {REPAIR, fmt, providerSubject} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'provider.over-capacity': [FindingSubject, Open]
  }
}

/** Placement refuses any allocation write to a provider whose usage exceeds capacity. */
export const overCapacity: CheckUnit = {
  code: 'provider.over-capacity',
  check: 'providers',
  severity: 'error',
  summary: 'usage above (total - reserved) x allocation_ratio',
  explain: {
    cause:
      'Usage is above (total - reserved) x allocation_ratio: an allocation ratio or reserved amount lowered after instances were placed, an inventory shrunk (hardware change), or allocations written around placement.',
    repair: 'Reported only: migrate instances off the provider or restore the ratio; `cloudctl simulate capacity` shows the headroom.',
  },
  run(ctx) {
    const {model} = ctx
    const rc = model.rc
    const findings: Finding[] = []
    for (const rp of model.snapshot.placement.resource_providers) {
      const usage = model.usageByProvider.get(rp.id)
      if (!usage) continue
      // forEach: a for-of over the map makes an entry pair per class while this runs unoptimised.
      usage.forEach((used, rcId) => {
        const inv = model.inventory(rp.id, rcId)
        const capacity = inv ? capacityOf(inv) : 0
        if (used <= capacity + 1e-6) return
        const cn = ctx.computeNodeOf(model.rootOf(rp))
        // nova's ironic driver (IronicDriver.update_provider_tree) reserves a node's unit while an
        // instance is on it (_node_resources_used; [workarounds]skip_reserve_in_use_ironic_nodes off)
        // or while the node is unavailable: reserved there says "taken", not "held back", and
        // placement takes that inventory over the allocation already on it. Only more than the
        // node's total is over capacity.
        if (inv && isIronicNode(cn) && used <= inv.total * floatRead(inv.allocation_ratio) + 1e-6) return
        findings.push({
          check: 'providers',
          code: 'provider.over-capacity',
          severity: 'error',
          subject: providerSubject(ctx, rp, cn),
          message: `${rc.name(rcId)} on ${rp.name ?? rp.uuid}: ${used} used, capacity ${fmt(capacity)}${inv ? ` = (${inv.total} - ${inv.reserved}) x ${floatRead(inv.allocation_ratio)}` : ' (no inventory)'}; placement refuses every allocation change on it.`,
          evidence: {
            provider: providerRow(rp),
            resource_class: rc.name(rcId),
            used,
            capacity,
            inventory: inv ? {id: inv.id, total: inv.total, reserved: inv.reserved, allocation_ratio: floatRead(inv.allocation_ratio)} : null,
          },
          repair: REPAIR,
        })
      })
    }
    return findings
  },
}
