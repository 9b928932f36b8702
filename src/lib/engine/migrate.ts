/**
 * Cold and live migration target selection, offline: what nova-api and the conductor check and
 * change in the RequestSpec before select_destinations (compute/api.py resize and live_migrate,
 * conductor/tasks/migrate.py and live_migrate.py), then the scheduler as for a boot.
 *
 * What a move changes in the request: the instance is scheduled itself (one instance, already a
 * member of its server group); force_hosts/nodes are reset; the source host goes into ignore_hosts
 * (a cold migration keeps it only when its provider has COMPUTE_SAME_HOST_COLD_MIGRATE); a --host is
 * a requested destination that still goes through the filters; the hosts are those of the
 * instance's cell. The instance's allocations are moved to the migration record before scheduling,
 * so placement still counts them on the source provider and nowhere else: the destination is asked
 * only for the new claim.
 */
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode, Instance} from '../domain/snapshot.js'
import type {SchedulerConfig} from './config.js'
import {serviceDown} from './filters.js'
import {simulateBoot} from './pipeline.js'
import type {BootRequest} from './request-spec.js'
import type {Refusal, SimulationResult} from './result.js'
import {NotFoundError} from '../errors.js'

export interface MigrateOptions {
  live: boolean
  /** The destination asked for (`openstack server migrate --host`, live migration without --force). */
  host?: string | null
  seed?: number
  explain?: boolean
  topWeighed?: number
}

/** One check nova makes before or after scheduling, and what it found. */
export interface MoveCheck {
  name: string
  ok: boolean
  detail: string
}

/** One select_destinations call (a live migration tries again without a host that fails its checks). */
export interface MoveAttempt {
  ignore_hosts: string[]
  chosen: string | null
  /** The conductor's check of the chosen host (live migration only). */
  check: MoveCheck | null
}

export interface MigrationResult {
  kind: 'cold' | 'live'
  instance: {uuid: string; name: string | null; host: string; node: string | null; cell: string; vm_state: string | null; power_state: number | null}
  requested_host: string | null
  /** nova-api's and the conductor's checks before scheduling, in order. */
  checks: MoveCheck[]
  same_host_allowed: boolean
  /** What the migration record holds on the source during the move (counted there by placement). */
  source_allocations: Array<{provider: string; resource_class: string; amount: number}>
  attempts: MoveAttempt[]
  destination: {host: string; node: string} | null
  /** The last select_destinations, stage by stage. */
  simulation: SimulationResult | null
  noValidHost: boolean
  summary: string
  refusal?: Refusal
  /** Checks nova makes that need the hosts themselves (not in a snapshot). */
  not_simulated: string[]
}

const RUNNING = 1
const PAUSED = 3
const SAME_HOST_TRAIT = 'COMPUTE_SAME_HOST_COLD_MIGRATE'

function liveInstance(model: CloudModel, uuid: string): Instance {
  const rows = model.liveInstances(uuid)
  const inst = rows.find((i) => i.host) ?? rows[0]
  if (!inst)
    throw new NotFoundError(
      `instance ${uuid} is not a live instance of this snapshot`,
      'See `cloudctl cells verify-instance UUID` or `openstack server show UUID`.',
    )
  if (!inst.host)
    throw new NotFoundError(
      `instance ${uuid} is on no host (vm_state ${inst.vm_state ?? '?'}): there is nothing to migrate from`,
      'A shelved-offloaded or never-scheduled instance is unshelved or rebuilt, not migrated.',
    )
  return inst
}

function sourceNode(model: CloudModel, inst: Instance): ComputeNode | undefined {
  return model.liveComputeNodes.find((cn) => cn.host === inst.host && (!inst.node || cn.hypervisor_hostname === inst.node))
}

/** check_instance_state, check_instance_host(check_is_up=True), the destination checks of the API. */
function apiChecks(model: CloudModel, inst: Instance, cfg: SchedulerConfig, opts: MigrateOptions): MoveCheck[] {
  const checks: MoveCheck[] = []
  const states = opts.live ? ['active', 'paused'] : ['active', 'stopped']
  checks.push({
    name: 'instance state (nova-api, 409)',
    ok: states.includes(inst.vm_state ?? ''),
    detail: `vm_state ${inst.vm_state ?? '?'}; a ${opts.live ? 'live' : 'cold'} migration needs ${states.join(' or ')}`,
  })
  const svc = model.snapshot.nova.services.find((s) => s.deleted === 0 && s.binary === 'nova-compute' && s.host === inst.host && s.cell_uuid === inst.cell_uuid)
  const down = svc ? serviceDown(svc, new Date(model.snapshot.captured_at), cfg.service_down_time) : 'has no service row'
  checks.push({
    name: 'source nova-compute up (409)',
    ok: down === null,
    detail: down === null ? `nova-compute on ${inst.host} is up` : `nova-compute on ${inst.host} ${down}`,
  })
  if (opts.live) {
    const ok = inst.power_state === RUNNING || inst.power_state === PAUSED
    checks.push({
      name: 'instance running (conductor, 400)',
      ok,
      detail: `power_state ${inst.power_state ?? '?'}; a live migration needs RUNNING (1) or PAUSED (3)`,
    })
  }
  if (opts.host && !opts.live)
    checks.push({
      name: 'not the source host (nova-api, 400)',
      ok: opts.host !== inst.host,
      detail: opts.host === inst.host ? `CannotMigrateToSameHost: ${opts.host} is where the instance is` : `${opts.host} is not the source host`,
    })
  return checks
}

/** _allow_resize_to_same_host for a cold migration: the source provider reports the trait. */
function sameHostAllowed(model: CloudModel, cn: ComputeNode | undefined, live: boolean): boolean {
  if (live || !cn?.uuid) return false
  const rp = model.providersByUuid.get(cn.uuid)
  return rp !== undefined && (model.traitsByProvider.get(rp.id)?.has(SAME_HOST_TRAIT) ?? false)
}

/** _check_compatible_with_source_hypervisor: same hypervisor type, not an older version. */
function hypervisorCheck(source: ComputeNode | undefined, dest: ComputeNode | undefined): MoveCheck {
  const name = 'hypervisor compatible with the source (conductor)'
  if (!source || !dest) return {name, ok: true, detail: 'not checked: a compute node row is missing'}
  if (source.hypervisor_type !== dest.hypervisor_type)
    return {name, ok: false, detail: `InvalidHypervisorType: ${dest.hypervisor_type} on ${dest.host}, ${source.hypervisor_type} on the source`}
  if ((source.hypervisor_version ?? 0) > (dest.hypervisor_version ?? 0))
    return {
      name,
      ok: false,
      detail: `DestinationHypervisorTooOld: version ${dest.hypervisor_version} on ${dest.host}, ${source.hypervisor_version} on the source`,
    }
  return {name, ok: true, detail: `${dest.hypervisor_type} ${dest.hypervisor_version} on ${dest.host}, ${source.hypervisor_version} on the source`}
}

function sourceAllocations(model: CloudModel, uuid: string): MigrationResult['source_allocations'] {
  return (model.allocationsByConsumer.get(uuid) ?? []).map((a) => ({
    provider: model.providersById.get(a.resource_provider_id)?.name ?? String(a.resource_provider_id),
    resource_class: model.rc.name(a.resource_class_id) ?? String(a.resource_class_id),
    amount: a.used,
  }))
}

/**
 * Where nova would move `base` (the instance's recorded request), or why it cannot: the API and
 * conductor checks, then select_destinations; a live migration retries without a host that fails
 * the conductor's hypervisor check, as _find_destination does (migrate_max_retries=-1: until none is left).
 */
export function simulateMigration(model: CloudModel, instanceUuid: string, base: BootRequest, cfg: SchedulerConfig, opts: MigrateOptions): MigrationResult {
  const inst = liveInstance(model, instanceUuid)
  const source = sourceNode(model, inst)
  const host = inst.host as string
  const result: MigrationResult = {
    kind: opts.live ? 'live' : 'cold',
    instance: {
      uuid: inst.uuid,
      name: inst.display_name,
      host,
      node: inst.node,
      cell: model.cellLabel(inst.cell_uuid),
      vm_state: inst.vm_state,
      power_state: inst.power_state,
    },
    requested_host: opts.host ?? null,
    checks: apiChecks(model, inst, cfg, opts),
    same_host_allowed: sameHostAllowed(model, source, opts.live),
    source_allocations: sourceAllocations(model, inst.uuid),
    attempts: [],
    destination: null,
    simulation: null,
    noValidHost: false,
    summary: '',
    not_simulated: opts.live ? ["the destination's own checks (check_can_live_migrate_destination: CPU compatibility, shared storage, port bindings)"] : [],
  }
  const failed = result.checks.find((c) => !c.ok)
  if (failed) {
    const status = Number(/\((?:[^)]*, )?(\d{3})\)$/.exec(failed.name)?.[1] ?? 400)
    result.refusal = {
      stage: failed.name,
      status,
      message: `nova refuses the ${result.kind} migration of ${inst.uuid}: ${failed.detail}`,
      hint: refusalHint(failed.name),
    }
    result.summary = `refused (${status}): ${failed.detail}`
    return result
  }
  schedule(model, inst, source, base, cfg, opts, result)
  return result
}

function refusalHint(check: string): string {
  if (check.startsWith('instance state')) return 'Start or unpause the instance first (nova checks vm_state before it schedules).'
  if (check.startsWith('source nova-compute'))
    return 'nova-api refuses to move an instance off a host whose nova-compute is down: evacuate it instead (`openstack server evacuate`).'
  if (check.startsWith('instance running')) return 'A live migration needs a running or paused guest; a stopped one is cold-migrated.'
  return 'Name another host with --host, or leave it out and let the scheduler choose.'
}

function schedule(
  model: CloudModel,
  inst: Instance,
  source: ComputeNode | undefined,
  base: BootRequest,
  cfg: SchedulerConfig,
  opts: MigrateOptions,
  result: MigrationResult,
): void {
  const ignore = result.same_host_allowed ? [] : [inst.host as string]
  for (;;) {
    const request: BootRequest = {
      ...base,
      numInstances: 1,
      forceHosts: [],
      forceNodes: [],
      ignoreHosts: [...ignore],
      host: opts.host ?? null,
      node: null,
      validateZone: false,
      move: {instanceUuid: inst.uuid, sourceHost: inst.host as string, cellUuid: inst.cell_uuid},
    }
    const sim = simulateBoot(model, request, cfg, {seed: opts.seed, explain: opts.explain, topWeighed: opts.topWeighed})
    result.simulation = sim
    const chosen = sim.instances[0]
    const attempt: MoveAttempt = {ignore_hosts: [...ignore], chosen: chosen?.host ?? null, check: null}
    result.attempts.push(attempt)
    if (!chosen?.host) {
      result.noValidHost = true
      result.summary = result.attempts.length > 1 ? `${sim.summary} (after ${result.attempts.length - 1} host(s) failed the conductor's checks)` : sim.summary
      return
    }
    if (opts.live) {
      const dest = model.liveComputeNodes.find((cn) => cn.host === chosen.host && cn.hypervisor_hostname === chosen.node)
      attempt.check = hypervisorCheck(source, dest)
      if (!attempt.check.ok) {
        ignore.push(chosen.host)
        continue
      }
    }
    result.destination = {host: chosen.host, node: chosen.node ?? ''}
    result.summary = `${result.kind} migration of ${inst.uuid} from ${inst.host} to ${chosen.host}${chosen.node && chosen.node !== chosen.host ? `/${chosen.node}` : ''}`
    return
  }
}
