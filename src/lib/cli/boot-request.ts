/**
 * `simulate boot --instance UUID`: the boot request rebuilt from what nova recorded for that instance
 * (nova_api.request_specs.spec, a RequestSpec), so the replay asks for exactly what the failed boot
 * asked: the flavor as it was then (it may since be deleted or changed), image properties, AZ,
 * scheduler hints and server group, the forced or requested destination, project and user.
 */
import type {CloudModel} from '../domain/model.js'
import {parseUnwrapped} from '../domain/nova-objects.js'
import type {RecordedRequest} from '../domain/recorded-request.js'
import type {Flavor, NovaApiTables} from '../domain/snapshot.js'
import type {BootRequest} from '../engine/index.js'
import {ConfigError, NotFoundError} from '../errors.js'
import {suggestCommand} from './hooks/command-not-found.js'

export type {RecordedRequest} from '../domain/recorded-request.js'

type Rec = Record<string, unknown>
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)
const num = (v: unknown, dflt = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : dflt)
const strList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [])

/** ImageMetaProps as the string properties a Glance image would carry (what the engine reads). */
function imageProperties(v: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  if (!isRec(v)) return out
  for (const [k, val] of Object.entries(v)) {
    if (val === null || val === undefined) continue
    // ImageMetaProps keeps trait:NAME=required properties as a list.
    if (k === 'traits_required') for (const t of strList(val)) out[`trait:${t}`] = 'required'
    else if (Array.isArray(val)) out[k] = val.map(String).join(',')
    else if (isRec(val)) continue
    else out[k] = String(val)
  }
  return out
}

const HINTS_SIMULATED = new Set(['group', 'same_host', 'different_host'])

function recordedFrom(uuid: string, data: Rec): RecordedRequest {
  const f = isRec(data.flavor) ? data.flavor : null
  if (!f) throw new ConfigError(`the request spec of instance ${uuid} has no flavor`, 'Check the row with `cloudctl snapshot validate FILE`.')
  const extra: Record<string, string> = {}
  if (isRec(f.extra_specs)) for (const [k, v] of Object.entries(f.extra_specs)) extra[k] = String(v)
  const image = isRec(data.image) ? data.image : {}
  const hints: Record<string, string[]> = {}
  if (isRec(data.scheduler_hints)) for (const [k, v] of Object.entries(data.scheduler_hints)) hints[k] = strList(v)
  const dest = isRec(data.requested_destination) ? data.requested_destination : null
  const group = isRec(data.instance_group) ? str(data.instance_group.uuid) : null
  const notSimulated = Object.keys(hints)
    .filter((k) => !HINTS_SIMULATED.has(k) && !k.startsWith('_'))
    .map((k) => `scheduler hint ${k}`)
  if (dest && (strList(dest.aggregates).length > 0 || str(dest.cell)))
    notSimulated.push('requested_destination cell/aggregates (the request filters recompute them)')
  if (isRec(data.pci_requests) && Array.isArray(data.pci_requests.requests) && data.pci_requests.requests.length > 0)
    notSimulated.push('pci_requests of ports (flavor pci_passthrough:alias is simulated)')
  // The port groups same_subtree names (QoS minimum bandwidth / packet rate) come from neutron at
  // each scheduling: nova does not keep requested_resources in the spec, so the replay cannot ask.
  const levels = isRec(data.request_level_params) ? data.request_level_params : null
  const subtrees = levels && Array.isArray(levels.same_subtree) ? levels.same_subtree.map(strList).filter((l) => l.length > 0) : []
  if (subtrees.length > 0)
    notSimulated.push(
      `ports' resource requests and same_subtree=${subtrees.map((l) => l.join(',')).join(' / ')} (nova reads the port groups from neutron; the spec does not keep them)`,
    )
  const imageId = str(image.id)
  return {
    instance_uuid: uuid,
    flavor: {
      name: str(f.name),
      flavorid: str(f.flavorid),
      vcpus: num(f.vcpus),
      memory_mb: num(f.memory_mb),
      root_gb: num(f.root_gb),
      ephemeral_gb: num(f.ephemeral_gb),
      swap: num(f.swap),
      extra_specs: extra,
    },
    image: {id: imageId, disk_format: str(image.disk_format), properties: imageProperties(image.properties)},
    availability_zone: str(data.availability_zone),
    scheduler_hints: hints,
    instance_group: group,
    requested_destination: dest ? {host: str(dest.host), node: str(dest.node)} : null,
    ignore_hosts: strList(data.ignore_hosts),
    force_hosts: strList(data.force_hosts),
    force_nodes: strList(data.force_nodes),
    project_id: str(data.project_id),
    user_id: str(data.user_id),
    num_instances: Math.max(1, num(data.num_instances, 1)),
    // is_bfv exists from RequestSpec 1.11; before it, nova derived it from an image without id.
    is_bfv: typeof data.is_bfv === 'boolean' ? data.is_bfv : imageId === null,
    not_simulated: notSimulated,
    holds_allocations_on: [],
  }
}

/** The recorded flavor as a flavors row: the engine uses it instead of today's flavor of that name. */
function flavorRow(r: RecordedRequest, data: Rec): Flavor {
  const f = data.flavor as Rec
  return {
    id: num(f.id, -1),
    flavorid: r.flavor.flavorid ?? '',
    name: r.flavor.name ?? r.flavor.flavorid ?? `flavor of ${r.instance_uuid}`,
    memory_mb: r.flavor.memory_mb,
    vcpus: r.flavor.vcpus,
    swap: r.flavor.swap,
    root_gb: r.flavor.root_gb,
    ephemeral_gb: r.flavor.ephemeral_gb,
    rxtx_factor: typeof f.rxtx_factor === 'number' ? f.rxtx_factor : null,
    vcpu_weight: typeof f.vcpu_weight === 'number' ? f.vcpu_weight : null,
    disabled: typeof f.disabled === 'boolean' ? f.disabled : null,
    is_public: typeof f.is_public === 'boolean' ? f.is_public : null,
    description: str(f.description),
    extra_specs: r.flavor.extra_specs,
  }
}

function specRowOf(model: CloudModel, uuid: string): string {
  const rows = model.snapshot.nova_api.request_specs
  if (rows === undefined) {
    throw new ConfigError(
      'this snapshot has no request specs (snapshot capture reads them only when asked)',
      'Capture with `cloudctl snapshot capture --request-specs -o FILE`, or read the live databases.',
    )
  }
  const row = rows.find((r) => r.instance_uuid === uuid)
  if (row) return row.spec
  const known = rows.map((r) => r.instance_uuid)
  const near = suggestCommand(uuid, known)
  const hint = near
    ? `Did you mean ${near}?`
    : model.instancesByUuid.has(uuid)
      ? 'The instance exists but nova_api.request_specs has no row for it (archived, or created before request specs).'
      : 'No instance of this cloud has that uuid: see `cloudctl cells verify-instance UUID` or `openstack server show UUID`.'
  throw new NotFoundError(`no request spec for instance ${uuid}`, hint)
}

export function bootRequestFromSpec(model: CloudModel, uuid: string): {request: BootRequest; recorded: RecordedRequest} {
  const parsed = parseUnwrapped(specRowOf(model, uuid), 'request spec')
  if (!parsed.ok || !isRec(parsed.value)) {
    throw new ConfigError(
      `the request spec of instance ${uuid} cannot be read${parsed.ok ? '' : `: ${parsed.error}`}`,
      'Check the row with `cloudctl snapshot validate FILE`.',
    )
  }
  const data = parsed.value
  const r = recordedFrom(uuid, data)
  const held = new Set(
    (model.allocationsByConsumer.get(uuid) ?? []).map((a) => model.providersById.get(a.resource_provider_id)?.name ?? String(a.resource_provider_id)),
  )
  r.holds_allocations_on = [...held].sort()
  const flavor = flavorRow(r, data)
  const hints = hintsOf(r)
  const request: BootRequest = {
    flavor: flavor.name,
    flavorRecord: flavor,
    extraSpecs: {},
    imageProperties: r.image.properties,
    imageId: r.image.id,
    imageDiskFormat: r.image.disk_format,
    availabilityZone: r.availability_zone,
    numInstances: r.num_instances,
    hints,
    ...(r.project_id ? {projectId: r.project_id} : {}),
    ...(r.user_id ? {userId: r.user_id} : {}),
    bootFromVolume: r.is_bfv,
    host: r.requested_destination?.host ?? null,
    node: r.requested_destination?.node ?? null,
    ignoreHosts: r.ignore_hosts,
    forceHosts: r.force_hosts,
    forceNodes: r.force_nodes,
  }
  return {request, recorded: r}
}

function hintsOf(r: RecordedRequest): NonNullable<BootRequest['hints']> {
  const hints: NonNullable<BootRequest['hints']> = {}
  const group = r.scheduler_hints.group?.[0] ?? r.instance_group
  if (group) hints.group = group
  if (r.scheduler_hints.same_host?.length) hints.same_host = r.scheduler_hints.same_host
  if (r.scheduler_hints.different_host?.length) hints.different_host = r.scheduler_hints.different_host
  return hints
}

/**
 * The scheduler hints the replay of `uuid` will carry, from nova_api alone (a live read asks before
 * it reads the cells). A spec that cannot be read gives none: the replay itself then fails on it.
 */
export function recordedHints(api: NovaApiTables, uuid: string): NonNullable<BootRequest['hints']> {
  const row = api.request_specs?.find((x) => x.instance_uuid === uuid)
  const parsed = row ? parseUnwrapped(row.spec, 'request spec') : null
  if (!parsed?.ok || !isRec(parsed.value)) return {}
  try {
    return hintsOf(recordedFrom(uuid, parsed.value))
  } catch {
    return {}
  }
}
