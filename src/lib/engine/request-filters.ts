/**
 * Stage 2: what nova-api checks before it schedules (the availability zone of a new boot), then
 * nova/scheduler/request_filter.py ALL_REQUEST_FILTERS in order: each narrows the placement query
 * (member_of, root_required) or ends the request with NoValidHost. Each leaves a line of trace.
 */
import {hostZones} from '../domain/availability-zone.js'
import type {CloudModel} from '../domain/model.js'
import {XS_KEYPAT} from '../domain/resource-request.js'
import type {Aggregate} from '../domain/snapshot.js'
import type {SchedulerConfig} from './config.js'
import type {PrefilterTrace, RequestSpec} from './request-spec.js'

/** A request filter ended the request: NoValidHost (the trace up to it is kept). */
export class RequestFilterFailed extends Error {
  trace: PrefilterTrace[] = []
}

/** nova-api answers the request with an error before anything is scheduled. */
export class RequestRefused extends Error {
  constructor(
    readonly stage: string,
    readonly status: number,
    message: string,
    readonly hint: string,
    readonly trace: PrefilterTrace[],
  ) {
    super(message)
  }
}

/** Traits the flavor and image require (ResourceRequest.all_required_traits). */
function allRequiredTraits(spec: RequestSpec): Set<string> {
  const out = new Set<string>()
  for (const [k, v] of Object.entries(spec.extraSpecs)) {
    const m = XS_KEYPAT.exec(k)
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
export function imageTraitsRequired(props: Record<string, string>): string[] {
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

/**
 * The zones nova-api accepts in a boot request (get_availability_zones with only available ones):
 * the zone of every host with an enabled nova-compute. A host's zone is its first aggregate (by id)
 * with availability_zone metadata, else default_availability_zone.
 */
export function availableZones(model: CloudModel, cfg: SchedulerConfig): string[] {
  const zoneOf = hostZones(model.snapshot.nova_api.aggregates, cfg.default_availability_zone)
  const zones = new Set<string>()
  for (const [host, services] of model.liveServicesByHost) {
    if (services.some((s) => s.binary === 'nova-compute' && !s.disabled)) zones.add(zoneOf(host))
  }
  return [...zones].sort()
}

const API_AZ = 'availability_zone (nova-api)'

/** _validate_and_build_base_options: a new boot names a zone that exists and has an enabled host. */
function checkZone(model: CloudModel, spec: RequestSpec, cfg: SchedulerConfig, trace: PrefilterTrace[]): void {
  if (!spec.availabilityZone || spec.validateZone === undefined) return
  if (!spec.validateZone) {
    trace.push({name: API_AZ, ran: false, effect: `not checked: nova-api validated zone ${spec.availabilityZone} when the instance was booted`})
    return
  }
  const zones = availableZones(model, cfg)
  const list = zones.join(', ') || '(none)'
  if (zones.includes(spec.availabilityZone)) {
    trace.push({name: API_AZ, ran: true, effect: `zone ${spec.availabilityZone} is available (zones with an enabled nova-compute: ${list})`})
    return
  }
  const message = `availability zone "${spec.availabilityZone}" is not available: nova-api refuses the request before scheduling`
  trace.push({name: API_AZ, ran: true, effect: `refused (400): zone ${spec.availabilityZone} is not available; zones with an enabled nova-compute: ${list}`})
  throw new RequestRefused(API_AZ, 400, message, `Zones with an enabled nova-compute: ${list}`, trace)
}

type Stage = (model: CloudModel, spec: RequestSpec, cfg: SchedulerConfig, aggs: Aggregate[]) => PrefilterTrace | null
const uuidOf = (a: Aggregate) => a.uuid ?? `aggregate-id-${a.id}`

const requireTenantAggregate: Stage = (_model, spec, cfg, aggs) => {
  const name = 'require_tenant_aggregate'
  if (!cfg.limit_tenants_to_placement_aggregate) return {name, ran: false, effect: 'limit_tenants_to_placement_aggregate=False'}
  const mine = aggs.filter((a) => Object.entries(a.metadata).some(([k, v]) => k.startsWith('filter_tenant_id') && v === spec.projectId)).map(uuidOf)
  if (mine.length > 0) {
    spec.requiredAggregates.push(mine)
    return {name, ran: true, effect: `member_of in:${mine.join(',')} (aggregates for project ${spec.projectId})`}
  }
  if (!cfg.placement_aggregate_required_for_tenants) return {name, ran: true, effect: 'no tenant aggregate: not restricted'}
  const failed = new RequestFilterFailed(
    `No hosts available for tenant ${spec.projectId}: no aggregate carries filter_tenant_id=${spec.projectId} and placement_aggregate_required_for_tenants=True`,
  )
  failed.trace.push({name, ran: true, effect: `no aggregate for project ${spec.projectId}: NoValidHost (placement_aggregate_required_for_tenants)`})
  throw failed
}

const mapAzToPlacementAggregate: Stage = (_model, spec, cfg, aggs) => {
  const name = 'map_az_to_placement_aggregate'
  if (!cfg.query_placement_for_availability_zone) return {name, ran: false, effect: 'query_placement_for_availability_zone=False'}
  if (!spec.availabilityZone) return {name, ran: false, effect: 'no availability zone requested'}
  const inAz = aggs.filter((a) => a.metadata.availability_zone === spec.availabilityZone).map(uuidOf)
  if (inAz.length === 0) return {name, ran: true, effect: `no aggregate has availability_zone=${spec.availabilityZone}: placement not restricted`}
  spec.requiredAggregates.push(inAz)
  return {name, ran: true, effect: `AZ ${spec.availabilityZone} -> member_of in:${inAz.join(',')}`}
}

const requireImageTypeSupport: Stage = (_model, spec, cfg) => {
  const name = 'require_image_type_support'
  if (!cfg.query_placement_for_image_type_support) return {name, ran: false, effect: 'query_placement_for_image_type_support=False'}
  if (spec.isBfv) return {name, ran: false, effect: 'boot from volume'}
  if (!spec.image.diskFormat) return {name, ran: false, effect: 'no image disk_format given (--image-disk-format)'}
  const t = `COMPUTE_IMAGE_TYPE_${spec.image.diskFormat.toUpperCase()}`
  spec.rootRequired.add(t)
  return {name, ran: true, effect: `root_required ${t}`}
}

const computeStatusFilter: Stage = (_model, spec) => {
  spec.rootForbidden.add('COMPUTE_STATUS_DISABLED')
  return {name: 'compute_status_filter', ran: true, effect: 'root_required !COMPUTE_STATUS_DISABLED'}
}

const isolateAggregates: Stage = (_model, spec, cfg, aggs) => {
  const name = 'isolate_aggregates'
  if (!cfg.enable_isolated_aggregate_filtering) return {name, ran: false, effect: 'enable_isolated_aggregate_filtering=False'}
  const keys = new Set([...allRequiredTraits(spec)].map((t) => `trait:${t}`))
  const isolated = aggs.filter((a) => Object.entries(a.metadata).some(([k, v]) => k.startsWith('trait:') && v === 'required' && !keys.has(k))).map(uuidOf)
  for (const u of isolated) spec.forbiddenAggregates.add(u)
  return {name, ran: true, effect: isolated.length > 0 ? `member_of !in:${isolated.join(',')}` : 'no isolated aggregate'}
}

const transformImageMetadata: Stage = (_model, spec, cfg) => {
  const name = 'transform_image_metadata'
  if (!cfg.image_metadata_prefilter) return {name, ran: false, effect: 'image_metadata_prefilter=False'}
  const added: string[] = []
  for (const [key, prefix] of Object.entries(IMAGE_METADATA_PREFIXES)) {
    const v = spec.image.properties[key]
    if (v !== undefined) added.push(`${prefix}_${v.replace(/-/g, '_').toUpperCase()}`)
  }
  for (const t of added) spec.rootRequired.add(t)
  return {name, ran: true, effect: added.length > 0 ? `root_required ${added.join(',')}` : 'no mapped image property'}
}

const acceleratorsFilter: Stage = (_model, spec) => {
  if (!spec.extraSpecs['accel:device_profile']) return null
  spec.rootRequired.add('COMPUTE_ACCELERATORS')
  return {name: 'accelerators_filter', ran: true, effect: 'root_required COMPUTE_ACCELERATORS'}
}

const REQUEST_FILTERS: Stage[] = [
  requireTenantAggregate,
  mapAzToPlacementAggregate,
  requireImageTypeSupport,
  computeStatusFilter,
  isolateAggregates,
  transformImageMetadata,
  acceleratorsFilter,
]

/**
 * nova-api's zone check, then ALL_REQUEST_FILTERS in order. Mutates spec; throws RequestRefused
 * (nova-api's error) or RequestFilterFailed (NoValidHost), each carrying the trace so far.
 */
export function runRequestFilters(model: CloudModel, spec: RequestSpec, cfg: SchedulerConfig): PrefilterTrace[] {
  const trace: PrefilterTrace[] = []
  checkZone(model, spec, cfg, trace)
  const aggs = model.snapshot.nova_api.aggregates
  for (const stage of REQUEST_FILTERS) {
    try {
      const t = stage(model, spec, cfg, aggs)
      if (t) trace.push(t)
    } catch (error) {
      if (error instanceof RequestFilterFailed) error.trace = [...trace, ...error.trace]
      throw error
    }
  }
  return trace
}
