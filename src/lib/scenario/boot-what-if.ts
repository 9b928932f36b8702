/**
 * `simulate boot` under a what-if scenario: the request on the snapshot transformed by the scenario
 * (drained instances re-placed first), beside the same request on the snapshot as captured. The
 * counterpart of capacityWhatIf (src/lib/capacity/what-if.ts). Pure.
 */
import type {CloudModel} from '../domain/model.js'
import {simulateBoot, type BootRequest, type SchedulerConfig, type SimulationResult} from '../engine/index.js'
import {nearest} from '../util/did-you-mean.js'
import {prepareScenario, scenarioIsEmpty, type DrainReport, type RepairEffect, type ScenarioOptions} from './index.js'

/** Present only with what-if flags: what changed, and the outcome on the snapshot as captured. */
export interface BootScenario {
  options: ScenarioOptions
  changes: string[]
  drains: DrainReport[]
  repairs: Omit<RepairEffect, 'snapshot'> | null
  /** The same request on the snapshot as captured. */
  before: {placedAll: boolean; placed: number; summary: string}
}

export type BootWhatIfResult = SimulationResult & {scenario?: BootScenario}

export interface BootWhatIfOptions {
  scenario: ScenarioOptions
  seed: number
  explain?: boolean
  /** Hosts (names or nodes) whose verdicts are asked for; the result keeps only theirs. */
  why?: string[]
  topWeighed?: number
}

export function simulateBootWhatIf(model: CloudModel, request: BootRequest, cfg: SchedulerConfig, opts: BootWhatIfOptions): BootWhatIfResult {
  const why = opts.why ?? []
  const options = {seed: opts.seed, explain: Boolean(opts.explain || why.length > 0), topWeighed: opts.topWeighed}
  let result: BootWhatIfResult
  let after = model
  if (scenarioIsEmpty(opts.scenario)) {
    result = simulateBoot(model, request, cfg, options)
  } else {
    const prepared = prepareScenario(model.snapshot, opts.scenario, cfg, {seed: opts.seed})
    const before = simulateBoot(model, request, cfg, {seed: opts.seed})
    after = prepared.model
    result = simulateBoot(after, request, cfg, {...options, state: prepared.state})
    if (result.refusal) return result
    const placed = before.instances.filter((o) => o.host !== null).length
    result.scenario = {
      options: opts.scenario,
      changes: prepared.changes,
      drains: prepared.drains,
      repairs: prepared.repairs,
      before: {placedAll: before.placedAll, placed, summary: before.summary},
    }
  }
  if (why.length > 0) {
    const known = new Set(after.liveComputeNodes.flatMap((cn) => [cn.host, cn.hypervisor_hostname]))
    // Each host is answered on its own: one that is not a live compute node says why, and the others
    // still get their verdicts (a deleted compute node whose provider remains is a common question).
    for (const h of why.filter((x) => !known.has(x))) result.warnings.push(whyUnknown(after, h, known))
    result.verdicts = result.verdicts.filter((v) => why.includes(v.host) || why.includes(v.node))
  }
  return result
}

/** Why `--why H` has no verdict: what the snapshot knows of H instead. */
function whyUnknown(model: CloudModel, host: string, known: Set<string | null>): string {
  const named = (cn: {host: string | null; hypervisor_hostname: string | null}) => cn.host === host || cn.hypervisor_hostname === host
  const deleted = model.snapshot.nova.compute_nodes.some((cn) => cn.deleted !== 0 && named(cn))
  const provider = model.snapshot.placement.resource_providers.find((rp) => rp.name === host)
  if (deleted && provider) return `--why ${host}: compute node deleted; its resource provider ${provider.uuid} is stale: see \`cloudctl audit providers\``
  if (deleted) return `--why ${host}: compute node deleted (nova-compute is gone from this host)`
  if (provider) return `--why ${host}: a resource provider with no compute node: see \`cloudctl audit providers\``
  const near = nearest(
    host,
    [...known].filter((x): x is string => x !== null),
  )
  return `--why ${host}: not a compute node of this snapshot${near ? `; did you mean ${near}?` : ''} (see \`cloudctl hosts list\`)`
}
