/**
 * What-if scenarios for `simulate boot` and `simulate capacity`: pure snapshot transforms (repairs,
 * added hosts, allocation ratios, disabled hosts) and the drain, which re-places a host's instances
 * through the engine and hands back the engine state they leave behind.
 *
 * Order: repairs, added hosts, allocation ratios, disabled (and drained) hosts; then the drain runs
 * on the resulting model.
 */
import {holdsResources} from '../checks/context.js'
import type {CloudModel} from '../domain/model.js'
import {buildModel} from '../domain/model.js'
import type {Instance, Snapshot} from '../domain/snapshot.js'
import {CloudctlError, ConfigError} from '../errors.js'
import {createEngineState, simulateBoot, type BootRequest, type EngineState, type SchedulerConfig} from '../engine/index.js'
import {applyPlannedRepairs, type RepairEffect} from './repairs.js'
import {addHostsLike, disableHost, setAllocationRatio, type RatioChange} from './transforms.js'

export {applyPlannedRepairs, type RepairEffect} from './repairs.js'
export {LEAK_CODES} from '../repairs/leaks.js'
export {
  addHostsLike,
  copySnapshot,
  disableHost,
  parseAllocationRatio,
  rewriteHostNumaCells,
  setAllocationRatio,
  type RatioChange,
  type Transformed,
} from './transforms.js'

export interface ScenarioOptions {
  disableHosts?: string[]
  drainHosts?: string[]
  allocationRatios?: RatioChange[]
  addHosts?: {count: number; like: string} | null
  applyRepairs?: boolean
}

export interface DrainedInstance {
  uuid: string
  name: string | null
  flavor: string | null
  to?: string
  reason?: string
}

export interface DrainReport {
  host: string
  instances: number
  replaced: DrainedInstance[]
  failed: DrainedInstance[]
}

export interface ScenarioResult {
  snapshot: Snapshot
  changes: string[]
  repairs: Omit<RepairEffect, 'snapshot'> | null
}

export function scenarioIsEmpty(o: ScenarioOptions): boolean {
  return !o.applyRepairs && !o.addHosts && !o.allocationRatios?.length && !o.disableHosts?.length && !o.drainHosts?.length
}

/** Name the flag in an error about its value (an unknown host or aggregate). */
function forFlag<T>(flag: string, fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    if (error instanceof CloudctlError) throw new CloudctlError(`${flag}: ${error.message}`, {exitCode: error.exitCode, code: error.code, hint: error.hint})
    throw error
  }
}

/** The snapshot transforms of a scenario (everything but the drain's re-placement). */
export function applyScenario(snapshot: Snapshot, o: ScenarioOptions): ScenarioResult {
  let s = snapshot
  const changes: string[] = []
  let repairs: ScenarioResult['repairs'] = null
  if (o.applyRepairs) {
    const r = applyPlannedRepairs(s)
    s = r.snapshot
    changes.push(...r.changes.map((c) => `repairs: ${c}`))
    const {snapshot: _drop, ...rest} = r
    void _drop
    repairs = rest
  }
  if (o.addHosts) {
    const {count, like} = o.addHosts
    const r = forFlag(`--like ${like}`, () => addHostsLike(s, count, like))
    s = r.snapshot
    changes.push(...r.changes)
  }
  for (const ratio of o.allocationRatios ?? []) {
    const r = forFlag('--set-allocation-ratio', () => setAllocationRatio(s, ratio))
    s = r.snapshot
    changes.push(...r.changes)
  }
  const off = [...new Set([...(o.disableHosts ?? []), ...(o.drainHosts ?? [])])]
  for (const h of off) {
    const drain = (o.drainHosts ?? []).includes(h)
    const r = forFlag(drain ? '--drain' : '--disable-host', () => disableHost(s, h, drain ? 'cloudctl what-if: drain' : 'cloudctl what-if: disabled'))
    s = r.snapshot
    changes.push(...r.changes)
  }
  return {snapshot: s, changes, repairs}
}

/** The group (by membership) an instance belongs to, for its scheduler hint. */
function groupOf(model: CloudModel, uuid: string): string | undefined {
  return model.snapshot.nova_api.instance_groups.find((g) => g.members.includes(uuid))?.uuid
}

/** The availability zone the instance was requested in, when its RequestSpec was captured. */
function requestedAz(model: CloudModel, uuid: string): string | null {
  const row = model.snapshot.nova_api.request_specs?.find((r) => r.instance_uuid === uuid)
  if (!row) return null
  try {
    const v = JSON.parse(row.spec) as Record<string, unknown>
    const data = (v['nova_object.data'] ?? v) as Record<string, unknown>
    return typeof data.availability_zone === 'string' ? data.availability_zone : null
  } catch {
    return null
  }
}

/**
 * Drain hosts (already disabled in `model`): re-place each live instance, largest first, through the
 * engine as a live migration without a destination would (its flavor, project, group hint and
 * requested AZ), consuming into one engine state. Instances that find no host are reported.
 */
export function drainHosts(
  model: CloudModel,
  hosts: string[],
  cfg: SchedulerConfig,
  opts: {state?: EngineState; seed?: number} = {},
): {state: EngineState; reports: DrainReport[]} {
  const state = opts.state ?? createEngineState()
  const reports: DrainReport[] = []
  let seed = opts.seed ?? 42
  for (const host of hosts) {
    const nodes = model.liveComputeNodes.filter((cn) => cn.host === host || cn.hypervisor_hostname === host)
    if (nodes.length === 0) throw new ConfigError(`--drain ${host}: not a live compute node of this snapshot`)
    const insts: Instance[] = nodes.flatMap((cn) => model.instancesOnNode(cn.host, cn.hypervisor_hostname)).filter(holdsResources)
    insts.sort((a, b) => (b.memory_mb ?? 0) - (a.memory_mb ?? 0) || (b.vcpus ?? 0) - (a.vcpus ?? 0) || (a.uuid < b.uuid ? -1 : 1))
    const report: DrainReport = {host: nodes[0]?.host ?? host, instances: insts.length, replaced: [], failed: []}
    const rps = model.snapshot.placement.resource_providers
    const roots = new Set(rps.filter((rp) => nodes.some((cn) => cn.uuid === rp.uuid)).map((rp) => rp.id))
    const sourceRps = new Set(rps.filter((rp) => roots.has(rp.root_provider_id ?? rp.id) || roots.has(rp.id)).map((rp) => rp.id))
    for (const inst of insts) {
      const flavor = inst.instance_type_id !== null ? model.flavorsById.get(inst.instance_type_id) : undefined
      const base: DrainedInstance = {uuid: inst.uuid, name: inst.display_name, flavor: flavor?.name ?? null}
      if (!flavor) {
        report.failed.push({...base, reason: `its flavor (id ${inst.instance_type_id}) is no longer in nova_api.flavors`})
        continue
      }
      const group = groupOf(model, inst.uuid)
      const req: BootRequest = {
        flavor: String(flavor.id),
        numInstances: 1,
        projectId: inst.project_id ?? undefined,
        userId: inst.user_id ?? undefined,
        availabilityZone: requestedAz(model, inst.uuid),
        bootFromVolume: inst.image_ref === '' || inst.image_ref === null,
        ...(group ? {hints: {group}} : {}),
      }
      let r
      try {
        r = simulateBoot(model, req, cfg, {seed: seed++, state})
      } catch (error) {
        report.failed.push({...base, reason: (error as Error).message})
        continue
      }
      const o = r.instances[0]
      if (!o || o.host === null) {
        report.failed.push({...base, reason: r.summary})
        continue
      }
      // The engine names its new instance simulated-instance-0001 in every request: give the host the
      // real uuid, so that later members of the same server group see this one where it now runs.
      const key = `${o.host}\u0000${o.node ?? ''}`
      const hs = state.hosts.get(key)
      if (hs) {
        const instances = new Set([...hs.instances].filter((u) => !u.startsWith('simulated-instance-')))
        instances.add(inst.uuid)
        state.hosts.set(key, {...hs, instances})
      }
      // A live migration frees the source allocation once it completes: the drained host's
      // placement usage (shown as zone utilisation) must not count the instance twice.
      for (const a of model.allocationsByConsumer.get(inst.uuid) ?? [])
        if (sourceRps.has(a.resource_provider_id)) state.addUsage(a.resource_provider_id, a.resource_class_id, -a.used)
      report.replaced.push({...base, to: o.host})
    }
    reports.push(report)
  }
  return {state, reports}
}

export interface PreparedScenario {
  model: CloudModel
  state: EngineState
  changes: string[]
  drains: DrainReport[]
  repairs: ScenarioResult['repairs']
}

/** Transforms, model, then the drain: what `simulate boot/capacity` run on under what-if flags. */
export function prepareScenario(snapshot: Snapshot, o: ScenarioOptions, cfg: SchedulerConfig, opts: {seed?: number} = {}): PreparedScenario {
  const r = applyScenario(snapshot, o)
  const model = buildModel(r.snapshot)
  let state = createEngineState()
  let drains: DrainReport[] = []
  if (o.drainHosts && o.drainHosts.length > 0) {
    const d = drainHosts(model, o.drainHosts, cfg, {state, seed: opts.seed})
    state = d.state
    drains = d.reports
    for (const rep of drains)
      r.changes.push(
        `drain ${rep.host}: ${rep.replaced.length} of ${rep.instances} instance(s) re-placed${rep.failed.length > 0 ? `, ${rep.failed.length} could not be: ${rep.failed.map((i) => i.name ?? i.uuid).join(', ')}` : ''}`,
      )
  }
  return {model, state, changes: r.changes, drains, repairs: r.repairs}
}
