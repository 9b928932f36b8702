/** What `simulateBoot` returns: the request as understood, each stage's trace, per-host verdicts. */
import type {WeightPart} from './weighers.js'
import type {PrefilterTrace, RequestSpec} from './request-spec.js'

export interface FilterStep {
  name: string
  start: number
  end: number
  skipped?: boolean
}

export interface HostVerdict {
  host: string
  node: string
  stage: 'placement' | 'host_state' | 'requested_destination' | 'filter' | 'weigher' | 'claim' | 'selected'
  filter?: string
  reason: string
  label: string
  need?: number
  have?: number
}

export interface WeighedView {
  host: string
  node: string
  weight: number
  parts: WeightPart[]
}

export interface InstanceOutcome {
  index: number
  instanceUuid: string
  host: string | null
  node: string | null
  /** Providers and amounts claimed in placement. */
  allocations: Array<{provider: string; resource_class: string; amount: number}>
  filters: FilterStep[]
  /** Hosts tried before the claim succeeded (claim failed: placement full). */
  claimFailures: string[]
  reason?: string
}

/** A request nova-api answers with an error before anything is scheduled (the stage that said so). */
export interface Refusal {
  stage: string
  status: number
  message: string
  hint: string
}

export interface SimulationResult {
  seed: number
  request: {
    flavor: string
    flavorid: string
    vcpus: number
    memory_mb: number
    disk_gb: number
    extra_specs: Record<string, string>
    image_properties: Record<string, string>
    availability_zone: string | null
    num_instances: number
    project_id: string
    boot_from_volume: boolean
    numa: string | null
  }
  prefilters: PrefilterTrace[]
  query: string | null
  queryEncoded: string | null
  warnings: string[]
  placement: {
    candidates: number
    kept: number
    cutByLimit: number
    limit: number | null
    providerSummaries: number
    stoppedAt: string | null
    notes: string[]
  }
  hostStates: {
    count: number
    unavailableCells: Array<{cell: string; candidates: number}>
    withoutService: string[]
    withoutComputeNode: number
  }
  instances: InstanceOutcome[]
  /** Hosts after the filters of the first instance, weighed (top N kept). */
  weighed: WeighedView[]
  /** Per compute node (host/node), why it was not chosen, or 'selected'. Only with explain/why. */
  verdicts: HostVerdict[]
  placedAll: boolean
  noValidHost: boolean
  summary: string
  /** Present when nova-api refuses the request: nothing was scheduled (the command exits 2). */
  refusal?: Refusal
}

export interface SimulateOptions {
  seed?: number
  /** Collect a verdict per compute node (for --explain / --why). */
  explain?: boolean
  /** How many weighed hosts to keep in the result. */
  topWeighed?: number
  state?: import('./state.js').EngineState
}

function numaText(spec: RequestSpec): string | null {
  const t = spec.numaTopology
  if (!t) return null
  const cells = t.cells.map((c) => {
    const cpus = `${c.pcpuset.length ? `${c.pcpuset.length} dedicated` : ''}${c.pcpuset.length && c.cpuset.length ? ' + ' : ''}${c.cpuset.length ? `${c.cpuset.length} shared` : ''}`
    return `cell ${c.id}: ${cpus} vCPU, ${c.memory} MB${c.threadPolicy ? `, thread policy ${c.threadPolicy}` : ''}`
  })
  return cells.join('; ') + (t.emulatorThreadsIsolated ? '; +1 pCPU for emulator threads' : '')
}

export function emptyResult(spec: RequestSpec, seed: number): SimulationResult {
  return {
    seed,
    request: {
      flavor: spec.flavor.name,
      flavorid: spec.flavor.flavorid,
      vcpus: spec.vcpus,
      memory_mb: spec.memoryMb,
      disk_gb: 0,
      extra_specs: spec.extraSpecs,
      image_properties: spec.image.properties,
      availability_zone: spec.availabilityZone,
      num_instances: spec.numInstances,
      project_id: spec.projectId,
      boot_from_volume: spec.isBfv,
      numa: numaText(spec),
    },
    prefilters: [],
    query: null,
    queryEncoded: null,
    warnings: [],
    placement: {candidates: 0, kept: 0, cutByLimit: 0, limit: null, providerSummaries: 0, stoppedAt: null, notes: []},
    hostStates: {count: 0, unavailableCells: [], withoutService: [], withoutComputeNode: 0},
    instances: [],
    weighed: [],
    verdicts: [],
    placedAll: false,
    noValidHost: true,
    summary: '',
  }
}

export function finishNoValidHost(result: SimulationResult, why: string): SimulationResult {
  result.noValidHost = true
  result.placedAll = false
  result.summary = `NoValidHost: ${why}`
  return result
}
