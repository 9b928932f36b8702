import type {Finding, FindingSubject, Open} from '../../domain/finding.js'
import type {CloudModel} from '../../domain/model.js'
import {type LeakClassification, classifyAllocations} from '../leaks/classify.js'
import type {CheckUnit} from '../unit.js'
import {nodeEvidence, nodePins} from './node-pins.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'pinning.placement-drift': [FindingSubject, Open]
  }
}

/** Placement PCPU usage versus the pins nova holds; allocations already reported by leaks are left out. */
export const placementDrift: CheckUnit = {
  code: 'pinning.placement-drift',
  check: 'pinning',
  severity: 'warning',
  summary: 'placement PCPU usage differs from the number of pinned pCPUs',
  explain: {
    cause:
      'Placement PCPU usage on the provider differs from the pCPUs its live instances pin: a PCPU allocation leaked by a deleted or moved instance, or one missing or short for a pinned guest.',
    repair: '`cloudctl repair leaks` removes leaked PCPU allocations; `repair leaks --heal` creates missing ones or fixes the amounts from the flavor.',
  },
  run(ctx) {
    const {model} = ctx
    const pcpuId = model.rc.id('PCPU') as number
    const findings: Finding[] = []
    let leakInfo: LeakClassification | undefined
    let excluded: Map<number, number> | undefined
    for (const {cn, moving, pinsByInstance} of nodePins(ctx)) {
      const rp = ctx.providerOf(cn)
      if (!rp || moving.length > 0) continue
      const inv = model.inventory(rp.id, pcpuId)
      if (!inv && model.usage(rp.id, pcpuId) === 0) continue
      leakInfo ??= classifyAllocations(ctx)
      excluded ??= excludedPcpu(model, pcpuId, leakInfo)
      // What the provider holds, less what leaks already reported (or could not decide).
      let used = model.usage(rp.id, pcpuId) - (excluded.get(rp.id) ?? 0)
      // A consumer flagged for a leftover elsewhere (the source of an evacuation) still holds its
      // rightful PCPU here, where it lives and pins: only its other providers were excluded.
      for (const uuid of pinsByInstance.keys()) {
        if (leakInfo.flaggedInstances.has(uuid)) continue
        if (!leakInfo.flaggedConsumers.has(uuid) && !leakInfo.undecidedConsumers.has(uuid)) continue
        const index = model.consumerIndex.get(uuid)
        for (const a of index === undefined ? [] : model.allocationsOf(index)) {
          if (a.resource_provider_id === rp.id && a.resource_class_id === pcpuId) used += a.used
        }
      }
      let expectedCount = 0
      for (const [uuid, n] of pinsByInstance) if (!leakInfo.flaggedInstances.has(uuid)) expectedCount += n
      if (used === expectedCount) continue
      findings.push({
        check: 'pinning',
        code: 'pinning.placement-drift',
        severity: 'warning',
        subject: {...ctx.nodeSubject(cn), provider_uuid: rp.uuid},
        message: `${cn.hypervisor_hostname ?? cn.host}: placement holds PCPU=${used} but the live instances pin ${expectedCount} pCPUs.`,
        evidence: {
          ...nodeEvidence(cn),
          provider: {id: rp.id, uuid: rp.uuid, generation: rp.generation},
          placement_pcpu_used: used,
          expected_pinned_count: expectedCount,
          pins_by_instance: Object.fromEntries(pinsByInstance),
        },
        repair: 'cloudctl repair leaks',
      })
    }
    return findings
  },
}

/** PCPU per provider held by consumers the leaks check flagged or left undecided (few: read per consumer). */
function excludedPcpu(model: CloudModel, pcpuId: number, leakInfo: LeakClassification): Map<number, number> {
  const out = new Map<number, number>()
  const consumers = new Set([...leakInfo.flaggedConsumers, ...leakInfo.undecidedConsumers])
  for (const consumer of consumers) {
    const index = model.consumerIndex.get(consumer)
    if (index === undefined) continue
    for (const a of model.allocationsOf(index)) {
      if (a.resource_class_id === pcpuId) out.set(a.resource_provider_id, (out.get(a.resource_provider_id) ?? 0) + a.used)
    }
  }
  return out
}
