import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import {isIronicNode} from '../ironic.js'
import {providerRow} from '../rows.js'
import type {CheckUnit} from '../unit.js'
import {REPAIR, cnRow} from './shared.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'provider.inventory-drift': [FindingSubject, Open]
  }
}

/** Inventory versus what the compute node reports (libvirt resources; ironic nodes are skipped). */
export const inventoryDrift: CheckUnit = {
  code: 'provider.inventory-drift',
  check: 'providers',
  severity: 'warning',
  summary: "inventory totals differ from the compute node's vcpus / memory_mb / local_gb",
  explain: {
    cause:
      "The provider's VCPU / MEMORY_MB / DISK_GB totals differ from the compute node's vcpus / memory_mb / local_gb: nova-compute is down, failing to report (see uuid-mismatch), or the host's hardware changed since it last reported.",
    repair: 'Reported only: restart nova-compute on the host; its periodic rewrites the inventory.',
  },
  run(ctx) {
    const {model} = ctx
    const findings: Finding[] = []
    for (const cn of model.liveComputeNodes) {
      const rp = ctx.providerOf(cn)
      if (!rp || isIronicNode(cn)) continue
      const drift: Record<string, {inventory_total: number; compute_node: number; inventory_id: number}> = {}
      const compare = (name: string, value: number) => {
        const id = model.rc.id(name)
        const inv = id === undefined ? undefined : model.inventory(rp.id, id)
        if (inv && inv.total !== value) drift[name] = {inventory_total: inv.total, compute_node: value, inventory_id: inv.id}
      }
      compare('VCPU', cn.vcpus)
      compare('MEMORY_MB', cn.memory_mb)
      compare('DISK_GB', cn.local_gb)
      if (Object.keys(drift).length === 0) continue
      const differences = Object.entries(drift)
        .map(([k, d]) => `${k} ${d.inventory_total} vs ${d.compute_node}`)
        .join(', ')
      findings.push({
        check: 'providers',
        code: 'provider.inventory-drift',
        severity: 'warning',
        subject: {...ctx.nodeSubject(cn), provider_uuid: rp.uuid},
        message: `Inventory of ${rp.name ?? rp.uuid} disagrees with compute node ${cn.hypervisor_hostname}: ${differences} (nova-compute has not updated placement).`,
        evidence: {provider: providerRow(rp), compute_node: cnRow(cn), drift},
        repair: REPAIR,
      })
    }
    return findings
  },
}
