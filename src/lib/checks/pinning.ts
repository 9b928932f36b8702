/**
 * pinning: per host NUMA cell, pinned_cpus must equal the pCPUs the live instances on that node pin
 * (cpu_pinning_raw values plus cpuset_reserved). Seed 004: pinned_cpus stayed full after the
 * instances were gone because update_available_resource had stopped, and NUMATopologyFilter
 * returned 0 hosts.
 */
import type {Finding} from '../domain/finding.js'
import {type CloudModel, nodeKey} from '../domain/model.js'
import {type HostNumaCell, pinnedHostCpus} from '../domain/nova-objects.js'
import {serviceUp} from '../domain/service-state.js'
import type {Instance} from '../domain/snapshot.js'
import {AuditContext, holdsResources, sortedNumbers} from './context.js'
import {classifyAllocations} from './leaks.js'

const REPAIR = 'cloudctl repair pinning'
/** Said of a node row whose nova-compute is down: no resource tracker has run since it went down. */
export const DOWN_HOST_NOTE = 'nova-compute on this host is down: its resource tracker recomputes the row when nova-compute starts'

export function checkPinning(model: CloudModel, ctx: AuditContext = new AuditContext(model)): Finding[] {
  const findings: Finding[] = []
  const pcpuId = model.rc.id('PCPU') as number
  let leakInfo: ReturnType<typeof classifyAllocations> | undefined
  let excluded: Map<number, number> | undefined

  for (const cn of model.liveComputeNodes) {
    const topo = ctx.hostNumaTopology(cn)
    if (!topo.ok || !topo.value || topo.value.cells.length === 0) continue
    const resident = model.instancesOnNode(cn.host, cn.hypervisor_hostname).filter(holdsResources)
    // Instances moving to or from this node: their pins on this end are not recorded anywhere we read.
    const moving = (ctx.inProgressByNode.get(nodeKey(cn.host, cn.hypervisor_hostname)) ?? [])
      .map((m) => (m.instance_uuid ? ctx.liveRows(m.instance_uuid)?.[0] : undefined))
      .filter((i): i is Instance => i !== undefined && !(i.host === cn.host && i.node === cn.hypervisor_hostname))
    let tolerance = 0
    let readable = true
    for (const inst of moving) {
      const t = ctx.instanceNumaTopology(inst)
      if (t.ok && t.value) for (const c of t.value.cells) tolerance += pinnedHostCpus(c).length
    }

    const byCell = new Map<number, Map<number, string[]>>()
    const pinsByInstance = new Map<string, number>()
    for (const inst of resident) {
      const t = ctx.instanceNumaTopology(inst)
      if (!t.ok) {
        readable = false // reported as snapshot.unreadable-blob; comparing without it would accuse the host
        break
      }
      if (!t.value) continue
      let n = 0
      for (const c of t.value.cells) {
        const pins = pinnedHostCpus(c)
        n += pins.length
        let m = byCell.get(c.id)
        if (!m) byCell.set(c.id, (m = new Map()))
        for (const p of pins) {
          const owners = m.get(p)
          if (owners) owners.push(inst.uuid)
          else m.set(p, [inst.uuid])
        }
      }
      if (n > 0) pinsByInstance.set(inst.uuid, n)
    }
    if (!readable) continue

    const base = {compute_node: {id: cn.id, uuid: cn.uuid, cell_uuid: cn.cell_uuid, updated_at: cn.updated_at}}
    // pinned_cpus is the resource tracker's own bookkeeping: on a dead host it is only stale.
    const rowIsStale = !serviceUp(model.serviceOf(cn), model.snapshot.captured_at)
    // Nothing pinned on the host and no instance pinning here: no per-cell finding can arise.
    if (byCell.size > 0 || topo.value.cells.some((c) => c.pinned_cpus.length > 0)) {
      const hostCells = new Map<number, HostNumaCell>(topo.value.cells.map((c) => [c.id, c]))
      const rpOfNode = ctx.providerOf(cn)
      const nodeSubject = {...ctx.nodeSubject(cn), ...(rpOfNode ? {provider_uuid: rpOfNode.uuid} : {})}
      const emit = (code: string, severity: Finding['severity'], cellId: number | undefined, message: string, evidence: Record<string, unknown>, instance?: string, rowOnly = false) =>
        findings.push({
          check: 'pinning',
          code,
          severity: rowOnly && rowIsStale ? 'info' : severity,
          subject: {...nodeSubject, ...(cellId === undefined ? {} : {numa_cell: cellId}), ...(instance ? {instance_uuid: instance} : {})},
          message: rowOnly && rowIsStale ? `${message} (${DOWN_HOST_NOTE}.)` : message,
          evidence: {...base, ...evidence, ...(rowOnly && rowIsStale ? {service_down: true} : {})},
          repair: REPAIR,
        })
      // One leaked finding per node: its repair rewrites the node's numa_topology once.
      const leakedCells: Array<{numa_cell: number; pinned_cpus: number[]; expected_pinned: number[]; leaked: number[]; pcpuset: number[] | null}> = []

      const cellIds = new Set([...hostCells.keys(), ...byCell.keys()])
      for (const cellId of [...cellIds].sort((a, b) => a - b)) {
        const hc = hostCells.get(cellId)
        const expected = byCell.get(cellId) ?? new Map<number, string[]>()
        const pinned = new Set(hc?.pinned_cpus ?? [])
        const owners = (cpus: number[]) => Object.fromEntries(cpus.map((p) => [p, expected.get(p) ?? []]))
        const where = `${cn.hypervisor_hostname ?? cn.host} NUMA cell ${cellId}`
        const leaked = sortedNumbers([...pinned].filter((p) => !expected.has(p)))
        if (leaked.length > 0) leakedCells.push({numa_cell: cellId, pinned_cpus: sortedNumbers(pinned), expected_pinned: sortedNumbers(expected.keys()), leaked, pcpuset: hc?.pcpuset ?? null})
        const unaccounted = moving.length > 0 ? [] : sortedNumbers([...expected.keys()].filter((p) => !pinned.has(p)))
        if (unaccounted.length > 0) {
          const unaccountedOwners = unaccounted.flatMap((p) => expected.get(p) ?? [])
          emit(
            'pinning.unaccounted',
            'warning',
            cellId,
            `${where}: pCPUs ${unaccounted.join(',')} are pinned by live instances but not in pinned_cpus; the scheduler may pin them again.`,
            {pinned_cpus: sortedNumbers(pinned), expected_pinned: sortedNumbers(expected.keys()), unaccounted, owners: owners(unaccounted)},
            soleOwner([...unaccountedOwners]),
            true,
          )
        }
        const overlap = sortedNumbers([...expected].filter(([, o]) => new Set(o).size > 1).map(([p]) => p))
        if (overlap.length > 0) {
          emit('pinning.overlap', 'error', cellId, `${where}: pCPUs ${overlap.join(',')} are pinned by more than one instance.`, {overlap, owners: owners(overlap)})
        }
        if (expected.size > 0) {
          const dedicated = new Set(hc?.pcpuset ?? [])
          const outside = sortedNumbers([...expected.keys()].filter((p) => !dedicated.has(p)))
          if (outside.length > 0) {
            emit(
              'pinning.outside-dedicated-set',
              'warning',
              cellId,
              hc
                ? `${where}: pCPUs ${outside.join(',')} are pinned but outside the dedicated set (cpu_dedicated_set) ${sortedNumbers(dedicated).join(',') || '(empty)'}.`
                : `${where}: instances pin pCPUs ${outside.join(',')} in a NUMA cell the host does not have.`,
              {outside, pcpuset: hc ? sortedNumbers(dedicated) : null, owners: owners(outside)},
              soleOwner(outside.flatMap((p) => expected.get(p) ?? [])),
            )
          }
        }
      }

      const leakedTotal = leakedCells.reduce((n, c) => n + c.leaked.length, 0)
      if (leakedTotal > tolerance) {
        const where = cn.hypervisor_hostname ?? cn.host
        emit(
          'pinning.leaked',
          'error',
          leakedCells.length === 1 ? leakedCells[0].numa_cell : undefined,
          `${where}: pCPUs ${leakedCells.map((c) => `${c.leaked.join(',')} (NUMA cell ${c.numa_cell})`).join('; ')} are pinned but no live instance on the node pins them; NUMATopologyFilter treats them as taken.`,
          {cells: leakedCells, instances: resident.map((i) => i.uuid), migrating_tolerance: tolerance},
          undefined,
          true,
        )
      }
    }

    // Placement PCPU usage versus the pins nova holds; allocations already reported by leaks are left out.
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
      for (const a of index === undefined ? [] : model.consumerAllocations[index]) {
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
      evidence: {...base, provider: {id: rp.id, uuid: rp.uuid, generation: rp.generation}, placement_pcpu_used: used, expected_pinned_count: expectedCount, pins_by_instance: Object.fromEntries(pinsByInstance)},
      repair: 'cloudctl repair leaks',
    })
  }

  findings.push(...ctx.undecided('pinning', 'pinning.undecided', 'CPU pinning of its compute nodes is'))
  return findings
}


/** PCPU per provider held by consumers the leaks check flagged or left undecided (few: read per consumer). */
function excludedPcpu(model: CloudModel, pcpuId: number, leakInfo: ReturnType<typeof classifyAllocations>): Map<number, number> {
  const out = new Map<number, number>()
  const consumers = new Set([...leakInfo.flaggedConsumers, ...leakInfo.undecidedConsumers])
  for (const consumer of consumers) {
    const index = model.consumerIndex.get(consumer)
    if (index === undefined) continue
    for (const a of model.consumerAllocations[index]) {
      if (a.resource_class_id === pcpuId) out.set(a.resource_provider_id, (out.get(a.resource_provider_id) ?? 0) + a.used)
    }
  }
  return out
}

/** The instance a finding is about, when exactly one instance owns the pCPUs in question. */
function soleOwner(owners: string[]): string | undefined {
  const set = new Set(owners)
  return set.size === 1 ? [...set][0] : undefined
}
