/**
 * Stage 1-3: the boot request -> RequestSpec -> nova's request filters -> the placement request
 * (ResourceRequest.from_request_spec + resources_from_request_spec in nova/scheduler/utils.py).
 */
import {NotFoundError, ConfigError} from '../errors.js'
import type {CloudModel} from '../domain/model.js'
import type {Aggregate, ComputeNode, Flavor} from '../domain/snapshot.js'
import type {PciAlias, SchedulerConfig} from './config.js'
import {instanceTopologyFor, NumaRequestError, type InstanceTopologyRequest} from './numa.js'
import {emptyGroup, type PlacementGroup, type PlacementRequest} from './placement.js'

export interface BootRequest {
  /** Flavor name, flavorid, or numeric id. */
  flavor: string
  /** Extra specs layered over the flavor's (for what-if runs). */
  extraSpecs?: Record<string, string>
  imageProperties?: Record<string, string>
  imageId?: string | null
  imageDiskFormat?: string | null
  availabilityZone?: string | null
  numInstances?: number
  hints?: {group?: string; same_host?: string[]; different_host?: string[]}
  projectId?: string
  userId?: string
  bootFromVolume?: boolean
  host?: string | null
  node?: string | null
  /** The flavor as a RequestSpec recorded it (replaces the lookup of `flavor`: it may since be deleted or changed). */
  flavorRecord?: Flavor
  /** RequestSpec ignore_hosts / force_hosts / force_nodes (host_manager.get_filtered_hosts). */
  ignoreHosts?: string[]
  forceHosts?: string[]
  forceNodes?: string[]
}

export interface ServerGroupSpec {
  uuid: string
  name: string | null
  policy: string | null
  rules: Record<string, number>
  /** Member instance uuids (the instances being booted are added as members, as nova-api does). */
  members: Set<string>
  /** Hosts of the members, growing as instances of this request are placed. */
  hosts: string[]
}

export interface PciRequest {
  alias: string
  count: number
  spec: PciAlias
}

export interface RequestSpec {
  flavor: Flavor
  extraSpecs: Record<string, string>
  image: {id: string | null; diskFormat: string | null; properties: Record<string, string>}
  projectId: string
  userId: string
  availabilityZone: string | null
  numInstances: number
  hints: {group?: string; same_host?: string[]; different_host?: string[]}
  group: ServerGroupSpec | null
  isBfv: boolean
  requestedDestination: {host: string; node: string | null; nodes: ComputeNode[]} | null
  ignoreHosts: string[]
  forceHosts: string[]
  forceNodes: string[]
  vcpus: number
  memoryMb: number
  rootGb: number
  ephemeralGb: number
  swap: number
  numaTopology: InstanceTopologyRequest | null
  pciRequests: PciRequest[]
  /** Set by request filters (Destination.require_aggregates / append_forbidden_aggregates). */
  requiredAggregates: string[][]
  forbiddenAggregates: Set<string>
  rootRequired: Set<string>
  rootForbidden: Set<string>
}

export interface PrefilterTrace {
  name: string
  ran: boolean
  effect: string
}

export const SIMULATED_PROJECT = 'simulated-project'
export const SIMULATED_USER = 'simulated-user'

export function findFlavor(model: CloudModel, ref: string): Flavor {
  const f = model.flavorsByName.get(ref) ?? model.flavorsByFlavorid.get(ref) ?? (/^\d+$/.test(ref) ? model.flavorsById.get(Number(ref)) : undefined)
  if (!f) {
    const names = [...model.flavorsByName.keys()].slice(0, 8).join(', ')
    throw new NotFoundError(`flavor "${ref}" not found`, names ? `Known flavors: ${names}${model.flavorsByName.size > 8 ? ', ...' : ''}` : 'The snapshot has no flavors.')
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
    if (!alias) throw new ConfigError(`PCI alias "${name}" (pci_passthrough:alias) is not defined`, 'Nova would refuse the flavor (PciRequestAliasNotDefined): pass --nova-conf with its [pci] alias.')
    return {alias: name as string, count: countText === undefined ? 1 : Number(countText), spec: alias}
  })
}

/**
 * The exceptions of numa_get_constraints ServersController.create maps to 400; LockMemoryForbidden
 * (a Forbidden) becomes 403, anything else a 500. Either way nothing is scheduled.
 */
const API_400 = new Set(['BadRequirementEmulatorThreadsPolicy', 'CPUThreadPolicyConfigurationInvalid', 'ImageCPUPinningForbidden', 'ImageCPUThreadPolicyForbidden', 'ImageNUMATopologyAsymmetric', 'ImageNUMATopologyCPUDuplicates', 'ImageNUMATopologyCPUOutOfRange', 'ImageNUMATopologyCPUsUnassigned', 'ImageNUMATopologyForbidden', 'ImageNUMATopologyIncomplete', 'ImageNUMATopologyMemoryOutOfRange', 'InvalidCPUAllocationPolicy', 'InvalidCPUThreadAllocationPolicy', 'InvalidEmulatorThreadsPolicy', 'InvalidNUMANodesNumber', 'InvalidRequest', 'MemoryPageSizeForbidden', 'MemoryPageSizeInvalid', 'RealtimeConfigurationInvalid', 'RealtimeMaskNotFoundOrInvalid', 'RequiredMixedInstancePolicy', 'RequiredMixedOrRealtimeCPUMask', 'InvalidMixedInstanceDedicatedMask'])

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
      throw new NotFoundError(`no compute node matches host ${req.host ?? '*'} node ${req.node ?? '*'}`, 'Check the name with `openstack compute service list` / `hypervisor list`.')
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
    numInstances: Math.max(1, req.numInstances ?? 1),
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
  }
}

export class RequestFilterFailed extends Error {}

const TRAIT_KEY = /^(resources|trait)([a-zA-Z0-9_-]{1,64})?:(.*)$/

/** Traits the flavor and image require (ResourceRequest.all_required_traits). */
function allRequiredTraits(spec: RequestSpec): Set<string> {
  const out = new Set<string>()
  for (const [k, v] of Object.entries(spec.extraSpecs)) {
    const m = TRAIT_KEY.exec(k)
    if (m && m[1] === 'trait' && v === 'required') out.add(m[3] as string)
  }
  for (const t of imageTraitsRequired(spec.image.properties)) out.add(t)
  const tp = spec.extraSpecs['hw:cpu_thread_policy'] ?? spec.image.properties.hw_cpu_thread_policy
  if (tp === 'require') out.add('HW_CPU_HYPERTHREADING')
  return out
}

/**
 * ImageMetaProps.traits_required: filled only from `trait:NAME=required` image properties; a Glance
 * property literally named traits_required is skipped by ImageMetaProps.from_dict.
 */
function imageTraitsRequired(props: Record<string, string>): string[] {
  const out: string[] = []
  for (const [k, v] of Object.entries(props)) if (/^trait:/.test(k) && v === 'required') out.push(k.slice('trait:'.length))
  return out
}

const IMAGE_METADATA_PREFIXES: Record<string, string> = {
  hw_cdrom_bus: 'COMPUTE_STORAGE_BUS',
  hw_disk_bus: 'COMPUTE_STORAGE_BUS',
  hw_video_model: 'COMPUTE_GRAPHICS_MODEL',
  hw_vif_model: 'COMPUTE_NET_VIF_MODEL',
  hw_architecture: 'HW_ARCH',
  hw_emulation_architecture: 'COMPUTE_ARCH',
  hw_viommu_model: 'COMPUTE_VIOMMU',
}

/** nova/scheduler/request_filter.py ALL_REQUEST_FILTERS, in order. Mutates spec; throws RequestFilterFailed. */
export function runRequestFilters(model: CloudModel, spec: RequestSpec, cfg: SchedulerConfig): PrefilterTrace[] {
  const trace: PrefilterTrace[] = []
  const aggs = model.snapshot.nova_api.aggregates
  const uuidOf = (a: Aggregate) => a.uuid ?? `aggregate-id-${a.id}`

  // require_tenant_aggregate
  if (cfg.limit_tenants_to_placement_aggregate) {
    const mine = aggs.filter((a) => Object.entries(a.metadata).some(([k, v]) => k.startsWith('filter_tenant_id') && v === spec.projectId)).map(uuidOf)
    if (mine.length > 0) {
      spec.requiredAggregates.push(mine)
      trace.push({name: 'require_tenant_aggregate', ran: true, effect: `member_of in:${mine.join(',')} (aggregates for project ${spec.projectId})`})
    } else if (cfg.placement_aggregate_required_for_tenants) {
      trace.push({name: 'require_tenant_aggregate', ran: true, effect: `no aggregate for project ${spec.projectId}: NoValidHost (placement_aggregate_required_for_tenants)`})
      throw new RequestFilterFailed(`No hosts available for tenant ${spec.projectId}: no aggregate carries filter_tenant_id=${spec.projectId} and placement_aggregate_required_for_tenants=True`)
    } else trace.push({name: 'require_tenant_aggregate', ran: true, effect: 'no tenant aggregate: not restricted'})
  } else trace.push({name: 'require_tenant_aggregate', ran: false, effect: 'limit_tenants_to_placement_aggregate=False'})

  // map_az_to_placement_aggregate
  if (!cfg.query_placement_for_availability_zone) trace.push({name: 'map_az_to_placement_aggregate', ran: false, effect: 'query_placement_for_availability_zone=False'})
  else if (!spec.availabilityZone) trace.push({name: 'map_az_to_placement_aggregate', ran: false, effect: 'no availability zone requested'})
  else {
    const inAz = aggs.filter((a) => a.metadata.availability_zone === spec.availabilityZone).map(uuidOf)
    if (inAz.length > 0) {
      spec.requiredAggregates.push(inAz)
      trace.push({name: 'map_az_to_placement_aggregate', ran: true, effect: `AZ ${spec.availabilityZone} -> member_of in:${inAz.join(',')}`})
    } else trace.push({name: 'map_az_to_placement_aggregate', ran: true, effect: `no aggregate has availability_zone=${spec.availabilityZone}: placement not restricted`})
  }

  // require_image_type_support
  if (!cfg.query_placement_for_image_type_support) trace.push({name: 'require_image_type_support', ran: false, effect: 'query_placement_for_image_type_support=False'})
  else if (spec.isBfv) trace.push({name: 'require_image_type_support', ran: false, effect: 'boot from volume'})
  else if (!spec.image.diskFormat) trace.push({name: 'require_image_type_support', ran: false, effect: 'no image disk_format given (--image-disk-format)'})
  else {
    const t = `COMPUTE_IMAGE_TYPE_${spec.image.diskFormat.toUpperCase()}`
    spec.rootRequired.add(t)
    trace.push({name: 'require_image_type_support', ran: true, effect: `root_required ${t}`})
  }

  // compute_status_filter: always
  spec.rootForbidden.add('COMPUTE_STATUS_DISABLED')
  trace.push({name: 'compute_status_filter', ran: true, effect: 'root_required !COMPUTE_STATUS_DISABLED'})

  // isolate_aggregates
  if (cfg.enable_isolated_aggregate_filtering) {
    const keys = new Set([...allRequiredTraits(spec)].map((t) => `trait:${t}`))
    const isolated = aggs.filter((a) => Object.entries(a.metadata).some(([k, v]) => k.startsWith('trait:') && v === 'required' && !keys.has(k))).map(uuidOf)
    for (const u of isolated) spec.forbiddenAggregates.add(u)
    trace.push({name: 'isolate_aggregates', ran: true, effect: isolated.length > 0 ? `member_of !in:${isolated.join(',')}` : 'no isolated aggregate'})
  } else trace.push({name: 'isolate_aggregates', ran: false, effect: 'enable_isolated_aggregate_filtering=False'})

  // transform_image_metadata
  if (cfg.image_metadata_prefilter) {
    const added: string[] = []
    for (const [key, prefix] of Object.entries(IMAGE_METADATA_PREFIXES)) {
      const v = spec.image.properties[key]
      if (v !== undefined) added.push(`${prefix}_${v.replace(/-/g, '_').toUpperCase()}`)
    }
    for (const t of added) spec.rootRequired.add(t)
    trace.push({name: 'transform_image_metadata', ran: true, effect: added.length > 0 ? `root_required ${added.join(',')}` : 'no mapped image property'})
  } else trace.push({name: 'transform_image_metadata', ran: false, effect: 'image_metadata_prefilter=False'})

  // accelerators_filter
  if (spec.extraSpecs['accel:device_profile']) {
    spec.rootRequired.add('COMPUTE_ACCELERATORS')
    trace.push({name: 'accelerators_filter', ran: true, effect: 'root_required COMPUTE_ACCELERATORS'})
  }
  return trace
}

function toInt(v: string): number | null {
  if (!/^\s*\d+\s*$/.test(v)) return null
  return Number(v)
}

/** ResourceRequest.from_request_spec + resources_from_request_spec. Also returns warnings nova logs. */
export function placementRequestFor(model: CloudModel, spec: RequestSpec, cfg: SchedulerConfig): {request: PlacementRequest; warnings: string[]; fatal: string | null} {
  const warnings: string[] = []
  let fatal: string | null = null
  const groups = new Map<string, PlacementGroup>()
  const group = (suffix: string) => groups.get(suffix) ?? groups.set(suffix, emptyGroup(suffix)).get(suffix) as PlacementGroup
  let groupPolicy: 'none' | 'isolate' | null = null
  const validRc = (rc: string) => rc.startsWith('CUSTOM_') || model.rc.id(rc) !== undefined
  const addResource = (rc: string, amount: number, suffix = '') => {
    if (!validRc(rc)) {
      warnings.push(`invalid resource class ${rc} ignored (nova logs "Received an invalid ResourceClass")`)
      return
    }
    group(suffix).resources.set(rc, amount)
  }
  const addTrait = (t: string, kind: string, suffix = '') => {
    if (kind === 'required') group(suffix).required.add(t)
    else if (kind === 'forbidden') group(suffix).forbidden.add(t)
    else warnings.push(`trait ${t}=${kind} ignored (only required|forbidden)`)
  }
  // _process_extra_specs
  for (const [key, val] of Object.entries(spec.extraSpecs)) {
    if (key === 'group_policy') {
      if (val === 'none' || val === 'isolate') groupPolicy = val
      else warnings.push(`invalid group_policy ${val} ignored`)
      continue
    }
    const m = TRAIT_KEY.exec(key)
    if (!m) continue
    const suffix = m[2] ?? ''
    if (m[1] === 'resources') {
      const n = toInt(val)
      if (n === null) warnings.push(`resources${suffix}:${m[3]}=${val} ignored (not a non-negative integer)`)
      else addResource(m[3] as string, n, suffix)
    } else addTrait(m[3] as string, val, suffix)
  }
  const suffixedFromFlavor = [...groups.keys()].filter((s) => s !== '').length
  // _process_image_meta
  for (const t of imageTraitsRequired(spec.image.properties)) addTrait(t, 'required')
  // _translate_pinning_policies
  const cpuPolicy = spec.extraSpecs['hw:cpu_policy'] ?? spec.image.properties.hw_cpu_policy
  const threadPolicy = spec.extraSpecs['hw:cpu_thread_policy'] ?? spec.image.properties.hw_cpu_thread_policy
  let pcpus = 0
  if (cpuPolicy === 'dedicated') {
    pcpus = spec.vcpus
    addResource('VCPU', 0)
  }
  if (cpuPolicy === 'mixed') {
    // len(dedicated mask or realtime mask): the pCPUs of the guest topology numa_get_constraints built
    pcpus = spec.numaTopology?.cells.reduce((n, c) => n + c.pcpuset.length, 0) ?? 0
    addResource('VCPU', spec.vcpus - pcpus)
  }
  if (cpuPolicy === 'dedicated' || cpuPolicy === 'mixed') {
    if (spec.extraSpecs['hw:emulator_threads_policy'] === 'isolate') pcpus += 1
    addResource('PCPU', pcpus)
  }
  if (threadPolicy === 'isolate') addTrait('HW_CPU_HYPERTHREADING', 'forbidden')
  if (threadPolicy === 'require') addTrait('HW_CPU_HYPERTHREADING', 'required')
  // Flavor base resources, unless overridden by extra specs.
  const merged = new Set<string>()
  for (const g of groups.values()) for (const rc of g.resources.keys()) merged.add(rc)
  if (!merged.has('VCPU') && !merged.has('PCPU')) addResource('VCPU', spec.vcpus)
  if (!merged.has('MEMORY_MB')) addResource('MEMORY_MB', spec.memoryMb)
  if (!merged.has('DISK_GB')) {
    let disk = spec.ephemeralGb + Math.ceil(spec.swap / 1024)
    if (!spec.isBfv) disk += spec.rootGb
    if (disk) addResource('DISK_GB', disk)
  }
  if (spec.extraSpecs['hw:mem_encryption'] === 'True' || spec.extraSpecs['hw:mem_encryption'] === 'true') addResource('MEM_ENCRYPTION_CONTEXT', 1)
  if ((spec.extraSpecs['hw:pci_numa_affinity_policy'] ?? spec.image.properties.hw_pci_numa_affinity_policy) === 'socket') addTrait('COMPUTE_SOCKET_PCI_NUMA_AFFINITY', 'required')
  if ((spec.extraSpecs['os:secure_boot'] ?? spec.image.properties.os_secure_boot) === 'required') addTrait('COMPUTE_SECURITY_UEFI_SECURE_BOOT', 'required')
  // strip_zeros
  for (const [suffix, g] of [...groups]) {
    for (const [rc, n] of [...g.resources]) if (n === 0) g.resources.delete(rc)
    if (g.resources.size === 0 && g.required.size === 0 && g.forbidden.size === 0 && g.memberOf.length === 0 && g.forbiddenAggregates.size === 0 && !g.inTree) groups.delete(suffix)
  }
  let limit: number | null = cfg.max_placement_results
  // resources_from_request_spec: destination aggregates, in_tree, hints
  if (spec.requiredAggregates.length > 0) group('').memberOf = spec.requiredAggregates.map((l) => [...l])
  if (spec.forbiddenAggregates.size > 0) for (const a of spec.forbiddenAggregates) group('').forbiddenAggregates.add(a)
  if (spec.requestedDestination) {
    const nodes = spec.requestedDestination.nodes
    if (nodes.length === 1) {
      const cn = nodes[0] as ComputeNode
      if (cn.uuid) group('').inTree = cn.uuid
    } else limit = null
  } else if (spec.forceHosts.length > 0 || spec.forceNodes.length > 0) {
    // resources_from_request_spec targets the first forced host/node the same way (requested_destination wins).
    const host = spec.forceHosts[0]
    const node = spec.forceNodes[0]
    const nodes = model.liveComputeNodes.filter((cn) => (host === undefined || cn.host === host) && (node === undefined || cn.hypervisor_hostname === node))
    if (nodes.length === 0) fatal = `No such host - host: ${host ?? 'None'} node: ${node ?? 'None'} (nova raises NoValidHost)`
    else if (nodes.length === 1 && nodes[0]?.uuid) group('').inTree = nodes[0].uuid
    else limit = null
  }
  const hints = spec.hints
  if (hints.group || hints.same_host?.length || hints.different_host?.length) limit = null
  const suffixed = [...groups.keys()].filter((s) => s !== '').length
  if (suffixed >= 2 && !groupPolicy) {
    if (suffixedFromFlavor <= 1) groupPolicy = 'none'
    else fatal = 'more than one numbered request group and no group_policy: placement answers 400 and nova raises NoValidHost'
  }
  // Unsuffixed group first, then suffixes in the order they appeared (nova's dict order).
  const ordered = [...groups.values()].sort((a, b) => (a.suffix === '' ? -1 : b.suffix === '' ? 1 : 0))
  return {
    request: {groups: ordered, groupPolicy, limit, rootRequired: new Set(spec.rootRequired), rootForbidden: new Set(spec.rootForbidden)},
    warnings,
    fatal,
  }
}
