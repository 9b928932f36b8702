/**
 * Builder family: nova_api. Flavors, aggregates (with their placement side), availability zones,
 * server groups, and the removal of host and instance mappings.
 */
import type {Aggregate, Flavor, HostMapping, InstanceGroup, InstanceMapping} from '../../../src/lib/domain/snapshot.js'
import {instanceFlavorBlob} from './blobs.js'
import {type FlavorResources, flavorResources} from './resources.js'
import type {AggregateSpec, FlavorSpec, HostRec, ServerGroupSpec} from './specs.js'
import {PlacementFamily} from './placement.js'

export abstract class NovaApiFamily extends PlacementFamily {
  addFlavor(spec: FlavorSpec): Flavor {
    if (this.flavors.has(spec.name)) throw new Error(`flavor ${spec.name} exists`)
    const f: Flavor = {
      id: ++this.seq.flavor,
      flavorid: spec.flavorid ?? this.rng.uuid(),
      name: spec.name,
      memory_mb: spec.memory_mb,
      vcpus: spec.vcpus,
      swap: spec.swap ?? 0,
      root_gb: spec.root_gb ?? 0,
      ephemeral_gb: spec.ephemeral_gb ?? 0,
      rxtx_factor: 1,
      // The API never sets it: NULL in the row (the embedded flavor object says 0).
      vcpu_weight: null,
      disabled: false,
      is_public: spec.is_public ?? true,
      description: spec.description ?? null,
      extra_specs: {...(spec.extra_specs ?? {})},
    }
    this.flavors.set(f.name, f)
    return f
  }

  /** flavorResources, memoised per flavor and boot source (the generator boots 300k instances). */
  resourcesOf(f: Flavor, bootFromVolume: boolean): FlavorResources {
    const key = `${f.id}/${bootFromVolume ? 1 : 0}`
    let r = this.resCache.get(key)
    if (!r) this.resCache.set(key, (r = flavorResources(f, bootFromVolume)))
    return r
  }

  /** The instance_extra.flavor text for an instance of this flavor (one shared string per flavor). */
  flavorBlob(f: Flavor): string {
    let s = this.flavorBlobs.get(f)
    if (s === undefined) this.flavorBlobs.set(f, (s = instanceFlavorBlob(f)))
    return s
  }

  addAggregate(spec: AggregateSpec): Aggregate {
    if (this.aggregatesByName.has(spec.name)) throw new Error(`aggregate ${spec.name} exists`)
    const agg: Aggregate = {id: ++this.seq.agg, uuid: spec.uuid ?? this.rng.uuid(), name: spec.name, hosts: [], metadata: {...(spec.metadata ?? {})}}
    this.aggregates.push(agg)
    this.aggregatesByName.set(spec.name, agg)
    for (const h of spec.hosts ?? []) this.addHostToAggregate(spec.name, h)
    return agg
  }

  /** nova's `aggregate add host`: the nova_api row and the placement aggregate on every node of the host. */
  addHostToAggregate(aggName: string, host: string): void {
    const agg = this.aggregatesByName.get(aggName)
    if (!agg) throw new Error(`no aggregate ${aggName}`)
    const recs = this.hostsByHost.get(host)
    if (!recs) throw new Error(`no host ${host}`)
    let members = this.aggregateHosts.get(agg)
    if (!members) this.aggregateHosts.set(agg, (members = new Set(agg.hosts)))
    if (!members.has(host)) {
      members.add(host)
      agg.hosts.push(host)
    }
    for (const r of recs) {
      this.linkAggregate(r.rp, agg.uuid as string)
      if (agg.metadata.availability_zone) r.az = agg.metadata.availability_zone
    }
  }

  protected joinAz(rec: HostRec, az: string): void {
    if (!this.aggregatesByName.has(az)) this.addAggregate({name: az, metadata: {availability_zone: az}})
    this.addHostToAggregate(az, rec.host)
  }

  addServerGroup(spec: ServerGroupSpec): InstanceGroup {
    const g: InstanceGroup = {
      id: ++this.seq.group,
      uuid: spec.uuid ?? this.rng.uuid(),
      name: spec.name,
      project_id: spec.project ?? this.defaultProject,
      user_id: spec.user ?? this.defaultUser,
      policies: [{policy: spec.policy, rules: spec.rules ? JSON.stringify(spec.rules) : null}],
      members: [...(spec.members ?? [])],
    }
    this.groups.push(g)
    return g
  }

  removeInstanceMapping(uuid: string): InstanceMapping {
    const m = this.instance(uuid).mapping
    const i = this.instanceMappings.indexOf(m)
    if (i < 0) throw new Error(`instance ${uuid} has no mapping`)
    this.instanceMappings.splice(i, 1)
    return m
  }

  removeHostMapping(host: string): HostMapping {
    const hm = this.hostMappingByHost.get(host)
    if (!hm) throw new Error(`host ${host} has no mapping`)
    this.hostMappings.splice(this.hostMappings.indexOf(hm), 1)
    this.hostMappingByHost.delete(host)
    return hm
  }
}
