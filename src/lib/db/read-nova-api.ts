/** nova_api into the snapshot: mappings, flavors, aggregates, build requests, request specs, groups. */
import type {NovaApiTables} from '../domain/snapshot.js'
import type {RowOf} from '../domain/tables/define.js'
import {
  AGGREGATE_HOSTS,
  AGGREGATE_METADATA,
  AGGREGATES,
  BUILD_REQUESTS,
  CELL_MAPPINGS,
  FLAVOR_EXTRA_SPECS,
  FLAVORS,
  HOST_MAPPINGS,
  INSTANCE_GROUP_MEMBER,
  INSTANCE_GROUP_POLICY,
  INSTANCE_GROUPS,
  INSTANCE_MAPPINGS,
  REQUEST_SPECS,
} from '../domain/tables/nova-api.js'
import {type Reader, readEach, readRows} from './table-reader.js'

export type CellMappingRow = Omit<RowOf<typeof CELL_MAPPINGS>, 'disabled'> & {disabled: boolean}

export async function readCellMappings(r: Reader): Promise<CellMappingRow[]> {
  const rows = await readRows(r, CELL_MAPPINGS)
  return rows.map((c) => ({...c, disabled: c.disabled ?? false}))
}

export async function readNovaApi(r: Reader, requestSpecs: boolean): Promise<NovaApiTables> {
  const host_mappings = await readRows(r, HOST_MAPPINGS)
  const instance_mappings = await readRows(r, INSTANCE_MAPPINGS)
  const flavors = await readFlavors(r)
  const aggregates = await readAggregates(r)
  const build_requests = await readRows(r, BUILD_REQUESTS)
  const request_specs = requestSpecs ? await readRows(r, REQUEST_SPECS) : undefined
  const instance_groups = await readInstanceGroups(r)
  const out: NovaApiTables = {host_mappings, instance_mappings, flavors, aggregates, build_requests, instance_groups}
  if (request_specs) out.request_specs = request_specs
  return out
}

export async function readFlavors(r: Reader): Promise<NovaApiTables['flavors']> {
  const flavors = await readRows(r, FLAVORS)
  const flavorById = new Map(flavors.map((f) => [f.id, f]))
  await readEach(r, FLAVOR_EXTRA_SPECS, {}, (x) => {
    const f = flavorById.get(x.flavor_id)
    // A NULL value has no meaning for nova's extra-spec validators; '' keeps the key visible.
    if (f) f.extra_specs[x.key] = x.value ?? ''
  })
  return flavors
}

export async function readAggregates(r: Reader): Promise<NovaApiTables['aggregates']> {
  const aggregates = await readRows(r, AGGREGATES)
  const aggById = new Map(aggregates.map((a) => [a.id, a]))
  await readEach(r, AGGREGATE_HOSTS, {}, (x) => {
    const a = aggById.get(x.aggregate_id)
    if (a && x.host !== null) a.hosts.push(x.host)
  })
  await readEach(r, AGGREGATE_METADATA, {}, (x) => {
    const a = aggById.get(x.aggregate_id)
    if (a) a.metadata[x.key] = x.value
  })
  return aggregates
}

export async function readInstanceGroups(r: Reader): Promise<NovaApiTables['instance_groups']> {
  const instance_groups = await readRows(r, INSTANCE_GROUPS)
  const groupById = new Map(instance_groups.map((g) => [g.id, g]))
  await readEach(r, INSTANCE_GROUP_POLICY, {}, (x) => {
    groupById.get(x.group_id)?.policies.push({policy: x.policy, rules: x.rules})
  })
  await readEach(r, INSTANCE_GROUP_MEMBER, {}, (x) => {
    const g = groupById.get(x.group_id)
    if (g && x.instance_uuid !== null) g.members.push(x.instance_uuid)
  })
  return instance_groups
}
