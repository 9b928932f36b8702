import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import {floatRead} from '../../domain/placement-capacity.js'
import type {AuditContext} from '../context.js'
import {type CheckUnit, runbook} from '../unit.js'
import {type NodeUsage, nodeUsages, usageEvidence, usageSubject} from './node-usage.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'usage.negative-free': [FindingSubject, Open]
  }
}

/** A row that matches its live instances: negative free values are explained by the allocation ratio. */
export const negativeFree: CheckUnit = {
  code: 'usage.negative-free',
  check: 'usage',
  severity: 'info|warning',
  summary: 'negative free values: info when overcommit within the allocation ratio, warning beyond it',
  explain: {
    cause:
      'free_ram_mb / free_disk_gb are negative: normal with an allocation ratio above 1 (overcommit, info); beyond the ratio the host holds more than placement should have allowed (warning).',
    repair: 'Nothing when info. Beyond the ratio: migrate instances off the node or raise its allocation ratios.',
    runbook: runbook('negative-free-resources'),
  },
  run(ctx) {
    const findings: Finding[] = []
    for (const u of nodeUsages(ctx)) {
      if (Object.keys(u.drift).length > 0) continue // usage.node-drift: the row itself is wrong
      const {negatives, beyondRatio} = negativeValues(u, sharesDisk(ctx, u))
      if (Object.keys(negatives).length === 0) continue
      const where = u.cn.hypervisor_hostname ?? u.cn.host
      findings.push({
        check: 'usage',
        code: 'usage.negative-free',
        severity: beyondRatio ? 'warning' : 'info',
        subject: usageSubject(ctx, u),
        message: beyondRatio
          ? `${where}: live instances use more than the node holds even with its allocation ratios (ratios lowered after they were placed?); no instance is missing, it is not a leak.`
          : `${where}: negative free values are overcommit within the allocation ratio, not a leak (the row matches its live instances).`,
        evidence: {...usageEvidence(ctx, u), negatives},
        ...(beyondRatio ? {repair: 'Migrate instances off the node or raise its allocation ratios.'} : {}),
      })
    }
    return findings
  },
}

/**
 * Aggregates of the sharing providers with DISK_GB inventory. A node in one of them may take its
 * DISK_GB from that provider while its own provider still reports its local disk (the libvirt driver
 * does, LP 1784020), and nova's resource tracker adds every instance's disk to local_gb_used wherever
 * placement took it: free_disk_gb then says nothing about the node.
 */
function sharedDiskAggregates(ctx: AuditContext): Set<string> {
  return ctx.once(sharedDiskAggregates, () => {
    const out = new Set<string>()
    const disk = ctx.model.rc.id('DISK_GB')
    if (disk === undefined) return out
    for (const rp of ctx.model.providersById.values()) {
      if (ctx.isSharing(rp) && ctx.model.inventory(rp.id, disk)) for (const a of ctx.model.aggregatesOf(rp.id)) out.add(a)
    }
    return out
  })
}

function sharesDisk(ctx: AuditContext, u: NodeUsage): boolean {
  const shared = sharedDiskAggregates(ctx)
  if (!u.rp || shared.size === 0) return false
  for (const a of ctx.model.aggregatesOf(u.rp.id)) if (shared.has(a)) return true
  return false
}

function negativeValues(u: NodeUsage, sharedDisk: boolean): {negatives: Record<string, unknown>; beyondRatio: boolean} {
  const {cn, memInv, diskInv, vcpuInv, reservedMem, reservedCpus} = u
  const negatives: Record<string, unknown> = {}
  let beyondRatio = false
  if ((cn.free_ram_mb ?? 0) < 0) {
    const ratio = memInv ? floatRead(memInv.allocation_ratio) : (cn.ram_allocation_ratio ?? 1.5)
    const capacity = (cn.memory_mb - reservedMem) * ratio + reservedMem
    beyondRatio ||= cn.memory_mb_used > capacity + 1e-6
    negatives.free_ram_mb = {value: cn.free_ram_mb, ram_allocation_ratio: ratio, overcommitted_capacity_mb: capacity, memory_mb_used: cn.memory_mb_used}
  }
  // Without DISK_GB on the node's provider, or with a DISK_GB sharing provider in one of its
  // aggregates, disk comes (or may come) from the sharing provider: local_gb says nothing.
  if ((cn.free_disk_gb ?? 0) < 0 && diskInv && !sharedDisk) {
    const ratio = floatRead(diskInv.allocation_ratio)
    const capacity = cn.local_gb * ratio
    beyondRatio ||= cn.local_gb_used > capacity + 1e-6
    negatives.free_disk_gb = {value: cn.free_disk_gb, disk_allocation_ratio: ratio, overcommitted_capacity_gb: capacity, local_gb_used: cn.local_gb_used}
  }
  if (cn.vcpus_used > cn.vcpus) {
    const ratio = vcpuInv ? floatRead(vcpuInv.allocation_ratio) : (cn.cpu_allocation_ratio ?? 16)
    const capacity = (cn.vcpus - reservedCpus) * ratio
    beyondRatio ||= cn.vcpus_used > capacity + reservedCpus + 1e-6
    negatives.free_vcpus = {value: cn.vcpus - cn.vcpus_used, cpu_allocation_ratio: ratio, overcommitted_capacity: capacity, vcpus_used: cn.vcpus_used}
  }
  return {negatives, beyondRatio}
}
