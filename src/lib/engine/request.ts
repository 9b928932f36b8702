/**
 * Stage 1-3: the boot request -> RequestSpec -> nova's request filters -> the placement request
 * (ResourceRequest.from_request_spec + resources_from_request_spec in nova/scheduler/utils.py).
 */
import {NotFoundError, ConfigError} from '../errors.js'
import type {CloudModel} from '../domain/model.js'
import type {ComputeNode, Flavor} from '../domain/snapshot.js'
import type {SchedulerConfig} from './config.js'
import {instanceTopologyFor, NumaRequestError, type InstanceTopologyRequest} from './numa.js'
import {boolFromString} from '../domain/strutils.js'
import {emptyGroup, type PlacementGroup, type PlacementRequest} from './placement-request.js'
import {imageTraitsRequired} from './request-filters.js'
import {SIMULATED_PROJECT, SIMULATED_USER, type BootRequest, type PciRequest, type RequestSpec, type ServerGroupSpec} from './request-spec.js'
import {buildResourceRequest, type CpuPinning, memEncryptionRequested, type ResourceRequest} from '../domain/resource-request.js'
import {nearest} from '../util/did-you-mean.js'

export {availableZones, RequestFilterFailed, RequestRefused, runRequestFilters} from './request-filters.js'

export function findFlavor(model: CloudModel, ref: string): Flavor {
  const f = model.flavorsByName.get(ref) ?? model.flavorsByFlavorid.get(ref) ?? (/^\d+$/.test(ref) ? model.flavorsById.get(Number(ref)) : undefined)
  if (!f) {
    const names = [...model.flavorsByName.keys()].slice(0, 8).join(', ')
    const near = nearest(ref, model.flavorsByName.keys())
    throw new NotFoundError(
      `flavor "${ref}" not found`,
      near
        ? `Did you mean ${near}? Known flavors: ${names}${model.flavorsByName.size > 8 ? ', ...' : ''}`
        : names
          ? `Known flavors: ${names}${model.flavorsByName.size > 8 ? ', ...' : ''}`
          : 'The snapshot has no flavors.',
    )
  }
  return f
}

function findGroup(model: CloudModel, ref: string): ServerGroupSpec {
  const g = model.snapshot.nova_api.instance_groups.find((x) => x.uuid === ref || x.name === ref)
  if (!g) throw new NotFoundError(`server group "${ref}" not found`, 'Pass the group uuid (or name) from `openstack server group list`.')
  const rulesText = g.policies[0]?.rules
  let rules: Record<string, number> = {}
  if (rulesText) {
    try {
      const parsed = JSON.parse(rulesText) as Record<string, unknown>
      rules = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, Number(v)]))
    } catch {
      rules = {}
    }
  }
  const hosts: string[] = []
  for (const uuid of g.members) {
    for (const inst of model.liveInstances(uuid)) if (inst.host && !hosts.includes(inst.host)) hosts.push(inst.host)
  }
  return {uuid: g.uuid, name: g.name, policy: g.policies[0]?.policy ?? null, rules, members: new Set(g.members), hosts}
}

function pciRequestsFor(extraSpecs: Record<string, string>, cfg: SchedulerConfig): PciRequest[] {
  const text = extraSpecs['pci_passthrough:alias']
  if (!text) return []
  return text.split(',').map((part) => {
    const [name, countText] = part.trim().split(':')
    const alias = cfg.pci_alias.find((a) => a.name === name)
    if (!alias)
      throw new ConfigError(
        `PCI alias "${name}" (pci_passthrough:alias) is not defined`,
        'Nova would refuse the flavor (PciRequestAliasNotDefined): pass --nova-conf with its [pci] alias.',
      )
    return {alias: name as string, count: countText === undefined ? 1 : Number(countText), spec: alias}
  })
}

/**
 * The exceptions of numa_get_constraints ServersController.create maps to 400; LockMemoryForbidden
 * (a Forbidden) becomes 403, anything else a 500. Either way nothing is scheduled.
 */
const API_400 = new Set([
  'BadRequirementEmulatorThreadsPolicy',
  'CPUThreadPolicyConfigurationInvalid',
  'ImageCPUPinningForbidden',
  'ImageCPUThreadPolicyForbidden',
  'ImageNUMATopologyAsymmetric',
  'ImageNUMATopologyCPUDuplicates',
  'ImageNUMATopologyCPUOutOfRange',
  'ImageNUMATopologyCPUsUnassigned',
  'ImageNUMATopologyForbidden',
  'ImageNUMATopologyIncomplete',
  'ImageNUMATopologyMemoryOutOfRange',
  'InvalidCPUAllocationPolicy',
  'InvalidCPUThreadAllocationPolicy',
  'InvalidEmulatorThreadsPolicy',
  'InvalidNUMANodesNumber',
  'InvalidRequest',
  'MemoryPageSizeForbidden',
  'MemoryPageSizeInvalid',
  'RealtimeConfigurationInvalid',
  'RealtimeMaskNotFoundOrInvalid',
  'RequiredMixedInstancePolicy',
  'RequiredMixedOrRealtimeCPUMask',
  'InvalidMixedInstanceDedicatedMask',
])

export function apiStatusOf(novaName: string): number {
  return API_400.has(novaName) ? 400 : novaName === 'LockMemoryForbidden' ? 403 : 500
}

function refusal(flavor: Flavor, error: NumaRequestError): ConfigError {
  const status = apiStatusOf(error.novaName)
  return new ConfigError(
    `nova-api refuses the request (${status} ${error.novaName}): ${error.message}`,
    `Flavor ${flavor.name} with these extra specs / image properties cannot be booted; fix the flavor or image (numa_get_constraints in nova/virt/hardware.py).`,
    'NovaApiRefusal',
  )
}

/** Build the RequestSpec nova-api and the conductor would hand to the scheduler. */
export function buildRequestSpec(model: CloudModel, req: BootRequest, cfg: SchedulerConfig): RequestSpec {
  const flavor = req.flavorRecord ?? findFlavor(model, req.flavor)
  const extraSpecs = {...flavor.extra_specs, ...(req.extraSpecs ?? {})}
  const props = {...(req.imageProperties ?? {})}
  let requestedDestination: RequestSpec['requestedDestination'] = null
  if (req.host || req.node) {
    const nodes = model.liveComputeNodes.filter((cn) => (!req.host || cn.host === req.host) && (!req.node || cn.hypervisor_hostname === req.node))
    if (nodes.length === 0) {
      throw new NotFoundError(
        `no compute node matches host ${req.host ?? '*'} node ${req.node ?? '*'}`,
        'Check the name with `openstack compute service list` / `hypervisor list`.',
      )
    }
    requestedDestination = {host: req.host ?? (nodes[0] as ComputeNode).host ?? '', node: req.node ?? null, nodes}
  }
  let numaTopology: InstanceTopologyRequest | null
  try {
    numaTopology = instanceTopologyFor(flavor.vcpus, flavor.memory_mb, extraSpecs, props)
  } catch (error) {
    if (error instanceof NumaRequestError) throw refusal(flavor, error)
    throw error
  }
  const group = req.hints?.group ? findGroup(model, req.hints.group) : null
  return {
    flavor,
    extraSpecs,
    image: {id: req.imageId ?? null, diskFormat: req.imageDiskFormat ?? null, properties: props},
    projectId: req.projectId ?? SIMULATED_PROJECT,
    userId: req.userId ?? SIMULATED_USER,
    availabilityZone: req.availabilityZone ?? null,
    // A move schedules the one instance (select_destinations with [instance.uuid]).
    numInstances: req.move ? 1 : Math.max(1, req.numInstances ?? 1),
    hints: req.hints ?? {},
    group,
    isBfv: Boolean(req.bootFromVolume),
    requestedDestination,
    ignoreHosts: req.ignoreHosts ?? [],
    forceHosts: req.forceHosts ?? [],
    forceNodes: req.forceNodes ?? [],
    vcpus: flavor.vcpus,
    memoryMb: flavor.memory_mb,
    rootGb: flavor.root_gb ?? 0,
    ephemeralGb: flavor.ephemeral_gb ?? 0,
    swap: flavor.swap,
    numaTopology,
    pciRequests: pciRequestsFor(extraSpecs, cfg),
    requiredAggregates: [],
    forbiddenAggregates: new Set(),
    rootRequired: new Set(),
    rootForbidden: new Set(),
    validateZone: req.validateZone,
    instanceUuid: req.move?.instanceUuid ?? null,
    moveSource: req.move?.sourceHost ?? null,
    cellUuid: req.move?.cellUuid ?? null,
  }
}

/** The pinning the request asks for: flavor first, then image; mixed counts the guest topology's dedicated CPUs. */
function pinningOf(spec: RequestSpec): CpuPinning {
  return {
    policy: spec.extraSpecs['hw:cpu_policy'] ?? spec.image.properties.hw_cpu_policy ?? null,
    // len(dedicated mask or realtime mask): the pCPUs of the guest topology numa_get_constraints built
    mixedPcpus: spec.numaTopology?.cells.reduce((n, c) => n + c.pcpuset.length, 0) ?? 0,
    isolateEmulator: spec.extraSpecs['hw:emulator_threads_policy'] === 'isolate',
    threadPolicy: spec.extraSpecs['hw:cpu_thread_policy'] ?? spec.image.properties.hw_cpu_thread_policy ?? null,
  }
}

/** Traits of the unsuffixed group nova derives from flavor and image after the amounts. */
function derivedTraits(spec: RequestSpec): string[] {
  const out: string[] = []
  if ((spec.extraSpecs['hw:pci_numa_affinity_policy'] ?? spec.image.properties.hw_pci_numa_affinity_policy) === 'socket')
    out.push('COMPUTE_SOCKET_PCI_NUMA_AFFINITY')
  if ((spec.extraSpecs['os:secure_boot'] ?? spec.image.properties.os_secure_boot) === 'required') out.push('COMPUTE_SECURITY_UEFI_SECURE_BOOT')
  return out
}

/** resources_from_request_spec: destination aggregates, in_tree and the limit (dropped for hints). */
function destinationScope(
  g: ResourceRequest<PlacementGroup>,
  model: CloudModel,
  spec: RequestSpec,
  cfg: SchedulerConfig,
): {limit: number | null; fatal: string | null} {
  let limit: number | null = cfg.max_placement_results
  let fatal: string | null = null
  if (spec.requiredAggregates.length > 0) g.group('').memberOf = spec.requiredAggregates.map((l) => [...l])
  if (spec.forbiddenAggregates.size > 0) for (const a of spec.forbiddenAggregates) g.group('').forbiddenAggregates.add(a)
  if (spec.requestedDestination) {
    const nodes = spec.requestedDestination.nodes
    if (nodes.length === 1) {
      const cn = nodes[0] as ComputeNode
      if (cn.uuid) g.group('').inTree = cn.uuid
    } else limit = null
  } else if (spec.forceHosts.length > 0 || spec.forceNodes.length > 0) {
    // resources_from_request_spec targets the first forced host/node the same way (requested_destination wins).
    const host = spec.forceHosts[0]
    const node = spec.forceNodes[0]
    const nodes = model.liveComputeNodes.filter((cn) => (host === undefined || cn.host === host) && (node === undefined || cn.hypervisor_hostname === node))
    if (nodes.length === 0) fatal = `No such host - host: ${host ?? 'None'} node: ${node ?? 'None'} (nova raises NoValidHost)`
    else if (nodes.length === 1 && nodes[0]?.uuid) g.group('').inTree = nodes[0].uuid
    else limit = null
  }
  const hints = spec.hints
  if (hints.group || hints.same_host?.length || hints.different_host?.length) limit = null
  return {limit, fatal}
}

/** ResourceRequest.from_request_spec + resources_from_request_spec. Also returns warnings nova logs. */
export function placementRequestFor(
  model: CloudModel,
  spec: RequestSpec,
  cfg: SchedulerConfig,
): {request: PlacementRequest; warnings: string[]; fatal: string | null} {
  const flavorAmounts = {
    vcpus: spec.vcpus,
    memory_mb: spec.memoryMb,
    root_gb: spec.rootGb,
    ephemeral_gb: spec.ephemeralGb,
    swap: spec.swap,
    extra_specs: spec.extraSpecs,
  }
  const g = buildResourceRequest(flavorAmounts, {
    bootFromVolume: spec.isBfv,
    pinning: pinningOf(spec),
    imageTraits: imageTraitsRequired(spec.image.properties),
    memEncryption: memEncryptionRequested(spec.extraSpecs, spec.image.properties),
    requiredTraits: derivedTraits(spec),
    newGroup: emptyGroup,
  })
  const suffixedFromFlavor = g.suffixedFromFlavor
  const scope = destinationScope(g, model, spec, cfg)
  let fatal = scope.fatal
  if (g.suffixedCount() >= 2 && !g.policy) {
    if (suffixedFromFlavor <= 1) g.policy = 'none'
    else fatal = 'more than one numbered request group and no group_policy: placement answers 400 and nova raises NoValidHost'
  }
  // Unsuffixed group first, then suffixes in the order they appeared (nova's dict order).
  const ordered = [...g.groups.values()].sort((a, b) => (a.suffix === '' ? -1 : b.suffix === '' ? 1 : 0))
  return {
    request: {groups: ordered, groupPolicy: g.policy, limit: scope.limit, rootRequired: new Set(spec.rootRequired), rootForbidden: new Set(spec.rootForbidden)},
    warnings: g.warnings,
    fatal,
  }
}

/**
 * Extra specs nova accepts (the API validates only their form) and then never reads: hw:numa_cpus.N /
 * hw:numa_mem.N without a NUMA topology (hw:numa_nodes, pinning, a page size or vPMEM), and
 * hw:cpu_realtime_mask without hw:cpu_realtime. The boot goes ahead as without them, so does the
 * simulation; the warning says why a range such as 0-9999999 did not matter.
 */
export function unreadSpecs(spec: RequestSpec): string[] {
  const out: string[] = []
  const cells = Object.keys(spec.extraSpecs).filter((k) => /^hw:numa_(cpus|mem)\.\d+$/.test(k))
  if (cells.length > 0 && spec.numaTopology === null)
    out.push(
      `${cells.join(', ')} ignored: nova reads them only when the request has a NUMA topology (hw:numa_nodes, a dedicated or mixed hw:cpu_policy, hw:mem_page_size or vPMEM)`,
    )
  if (spec.extraSpecs['hw:cpu_realtime_mask'] !== undefined && !boolFromString(spec.extraSpecs['hw:cpu_realtime']))
    out.push('hw:cpu_realtime_mask ignored: nova reads it only with hw:cpu_realtime=yes')
  return out
}
