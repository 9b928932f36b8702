/**
 * cloudctl's host states, filters and weighers against nova's own on a small generated cloud, for
 * Zed (python3-nova 26) and 2025.1 (nova 31 in the chroot of test/releases), each with its own
 * filters and weighers and the engine set to that release: nova builds its HostState objects from the same compute node, service,
 * aggregate and instance rows (ComputeNode._from_db_object + HostState.update), then every filter
 * runs on every host (not chained, to see each filter's verdict on all of them) and the weight
 * handler orders all hosts. Skipped when /usr/bin/python3 cannot import nova (driver.ts).
 */
import {describe, expect, it} from 'vitest'

import {buildModel, type CloudModel} from '../../src/lib/domain/model.js'
import type {Snapshot} from '../../src/lib/domain/snapshot.js'
import {allWeighers, applyNovaConf, defaultSchedulerConfig, notInRelease, type EngineRelease, type SchedulerConfig} from '../../src/lib/engine/config.js'
import {FILTERS, type FilterContext} from '../../src/lib/engine/filters.js'
import {buildHostState, hostStateBase, type HostState} from '../../src/lib/engine/host-state.js'
import {buildRequestSpec} from '../../src/lib/engine/request.js'
import {type BootRequest, type ServerGroupSpec} from '../../src/lib/engine/request-spec.js'
import {resolveWeighers, weighHosts} from '../../src/lib/engine/weighers.js'
import {generateCloud} from '../support/generator.js'
import {COMPARE, COMPARE_RELEASES, runNova} from './driver.js'

const ZED_FILTERS = [
  'ComputeFilter',
  'ComputeCapabilitiesFilter',
  'ImagePropertiesFilter',
  'ServerGroupAntiAffinityFilter',
  'ServerGroupAffinityFilter',
  'NUMATopologyFilter',
  'AvailabilityZoneFilter',
  'AggregateInstanceExtraSpecsFilter',
  'AggregateMultiTenancyIsolation',
  'IsolatedHostsFilter',
  'SameHostFilter',
  'DifferentHostFilter',
  'IoOpsFilter',
  'AggregateIoOpsFilter',
  'NumInstancesFilter',
  'AggregateNumInstancesFilter',
  'PciPassthroughFilter',
]

const NOVA_CONF = {
  filter_scheduler: {
    max_io_ops_per_host: '4',
    max_instances_per_host: '10',
    isolated_hosts: 'HOST_ISO',
    isolated_images: 'img-iso',
    restrict_isolated_hosts_to_isolated_images: 'true',
    io_ops_weight_multiplier: '-2.0',
    build_failure_weight_multiplier: '100.0',
  },
  DEFAULT: {cpu_allocation_ratio: '4.0'},
}

const PCI_ALIASES = [
  JSON.stringify({name: 'gpu', vendor_id: '10de', product_id: '1eb8', device_type: 'type-PCI'}),
  JSON.stringify({name: 'nic', vendor_id: '8086'}),
  JSON.stringify({name: 'pf', vendor_id: '8086', device_type: 'type-PF'}),
]

/** A generated cloud with the things filters look at made interesting. */
function cloud(): {snapshot: Snapshot; model: CloudModel} {
  const {snapshot: s} = generateCloud({seed: 5, now: '2024-06-03 05:03:40', cells: 1, hosts: 30, instances: 300, pinnedHostFraction: 0.3})
  const byName = new Map(s.nova_api.aggregates.map((a) => [a.name, a]))
  Object.assign(byName.get('ssd')?.metadata ?? {}, {
    filter_tenant_id: 'tenant-a,tenant-c',
    max_io_ops_per_host: '2',
    max_instances_per_host: '9',
    ram_weight_multiplier: '-1.5',
  })
  Object.assign(byName.get('az1')?.metadata ?? {}, {cpu_weight_multiplier: '2', max_instances_per_host: 'lots'})
  const svc = s.nova.services.filter((x) => x.binary === 'nova-compute')
  if (svc[0]) svc[0].disabled = true
  if (svc[1]) svc[1].forced_down = true
  if (svc[2]) svc[2].last_seen_up = '2024-06-03 05:01:00'
  if (svc[3]) svc[3].last_seen_up = null
  const cns = s.nova.compute_nodes
  if (cns[4]) cns[4].cpu_allocation_ratio = 0
  if (cns[5]) cns[5].stats = JSON.stringify({...JSON.parse(cns[5].stats ?? '{}'), io_workload: '5', failed_builds: '2'})
  if (cns[6]) cns[6].free_disk_gb = null
  if (cns[7]) cns[7].disk_available_least = 3
  // hypervisors of three versions, for 2025.1's HypervisorVersionWeigher
  cns.forEach((cn, i) => (cn.hypervisor_version = [6002000, 8002000, 9001000][i % 3] as number))
  // PCI pools as nova-compute writes them (PciDevicePoolList)
  const pools = (list: Array<{vendor_id: string; product_id: string; numa_node: number; count: number; tags: Record<string, string>}>) =>
    JSON.stringify({
      'nova_object.name': 'PciDevicePoolList',
      'nova_object.namespace': 'nova',
      'nova_object.version': '1.1',
      'nova_object.data': {
        objects: list.map((p) => ({'nova_object.name': 'PciDevicePool', 'nova_object.namespace': 'nova', 'nova_object.version': '1.1', 'nova_object.data': p})),
      },
    })
  if (cns[9]) cns[9].pci_stats = pools([{vendor_id: '10de', product_id: '1eb8', numa_node: 0, count: 2, tags: {dev_type: 'type-PCI'}}])
  if (cns[10])
    cns[10].pci_stats = pools([
      {vendor_id: '8086', product_id: '154c', numa_node: 0, count: 4, tags: {dev_type: 'type-VF', physical_network: 'physnet1'}},
      {vendor_id: '8086', product_id: '1572', numa_node: 1, count: 2, tags: {dev_type: 'type-PF'}},
    ])
  if (cns[11]) cns[11].pci_stats = pools([{vendor_id: '8086', product_id: '1572', numa_node: 0, count: 3, tags: {dev_type: 'type-PF'}}])
  if (cns[12])
    cns[12].pci_stats = pools([
      {vendor_id: '8086', product_id: '154c', numa_node: 0, count: 8, tags: {dev_type: 'type-VF', remote_managed: 'true'}},
      {vendor_id: '10de', product_id: '1eb8', numa_node: 1, count: 1, tags: {dev_type: 'type-PCI'}},
    ])
  return {snapshot: s, model: buildModel(s)}
}

function engineHosts(model: CloudModel, cfg: SchedulerConfig): HostState[] {
  const base = hostStateBase(model, cfg)
  return [...base.byUuid.values()].flat().map((cn) => buildHostState(model, cn, cfg, base))
}

interface Scenario {
  name: string
  boot: BootRequest
  group?: Omit<ServerGroupSpec, 'members'> & {members: string[]}
}

describe.skipIf(!COMPARE).each(COMPARE_RELEASES.length > 0 ? COMPARE_RELEASES : (['zed'] as EngineRelease[]))(
  'compare with nova %s: host states, filters and weighers',
  (release) => {
    const {snapshot, model} = COMPARE ? cloud() : ({} as ReturnType<typeof cloud>)
    const isoHost = COMPARE ? (snapshot.nova.compute_nodes[8]?.host ?? '') : ''
    const conf = {...NOVA_CONF, filter_scheduler: {...NOVA_CONF.filter_scheduler, isolated_hosts: isoHost}}
    const cfg = COMPARE ? applyNovaConf(defaultSchedulerConfig(release), {...conf, pci: {alias: PCI_ALIASES}}) : defaultSchedulerConfig(release)
    // the filters of this release (nova 31 has no AvailabilityZoneFilter) and all its weighers
    const FILTERS_HERE = ZED_FILTERS.filter((n) => notInRelease({...cfg, enabled_filters: [n], weight_classes: []}).length === 0)
    const WEIGHERS_HERE = allWeighers(release)
    const hosts = COMPARE ? engineHosts(model, cfg) : []
    const instancesOn = (i: number) => [...(hosts[i]?.instances ?? [])]

    const scenarios: Scenario[] = COMPARE
      ? [
          {name: 'plain flavor, tenant of the ssd aggregate', boot: {flavor: 'm1.small', projectId: 'tenant-a'}},
          {name: 'pinned flavor in az1, other tenant', boot: {flavor: 'm1.pinned', availabilityZone: 'az1', projectId: 'tenant-b'}},
          {name: 'pinned with emulator threads isolation', boot: {flavor: 'm1.pinned-iso', projectId: 'tenant-c'}},
          {name: 'mixed policy', boot: {flavor: 'm1.mixed', availabilityZone: 'az2'}},
          {
            name: 'aggregate and capability extra specs, isolated image',
            boot: {
              flavor: 'm1.medium',
              extraSpecs: {
                'aggregate_instance_extra_specs:disk': 'ssd',
                'capabilities:hypervisor_type': 's== QEMU',
                'capabilities:cpu_info:arch': '<or> x86_64 <or> aarch64',
                hypervisor_version: '>= 1',
              },
              imageId: 'img-iso',
              imageProperties: {hw_architecture: 'x86_64', img_hv_type: 'kvm'},
            },
          },
          {
            name: 'same_host / different_host hints',
            boot: {
              flavor: 'm1.tiny',
              hints: {same_host: [...instancesOn(10).slice(0, 1), ...instancesOn(11).slice(0, 1)], different_host: instancesOn(10).slice(0, 1)},
            },
          },
          {
            name: 'anti-affinity group (max 2 per host)',
            boot: {flavor: 'm1.small'},
            group: {
              uuid: 'g-anti',
              name: 'anti',
              policy: 'anti-affinity',
              rules: {max_server_per_host: 2},
              members: [...instancesOn(12).slice(0, 2), ...instancesOn(13).slice(0, 1)],
              hosts: [],
            },
          },
          {
            name: 'affinity group',
            boot: {flavor: 'm1.small'},
            group: {uuid: 'g-aff', name: 'aff', policy: 'affinity', rules: {}, members: instancesOn(14).slice(0, 1), hosts: [hosts[14]?.host ?? '']},
          },
          {name: 'PCI: two GPUs', boot: {flavor: 'm1.small', extraSpecs: {'pci_passthrough:alias': 'gpu:2'}}},
          {name: 'PCI: any Intel device but not PFs, vDPA or remote-managed', boot: {flavor: 'm1.small', extraSpecs: {'pci_passthrough:alias': 'nic:3'}}},
          {name: 'PCI: a PF and a GPU', boot: {flavor: 'm1.small', extraSpecs: {'pci_passthrough:alias': 'pf:1,gpu:1'}}},
          {
            name: 'soft-affinity group (weigher)',
            boot: {flavor: 'm1.small'},
            group: {uuid: 'g-soft', name: 'soft', policy: 'soft-affinity', rules: {}, members: [...instancesOn(15), ...instancesOn(16).slice(0, 1)], hosts: []},
          },
          {
            name: 'soft-anti-affinity group (weigher)',
            boot: {flavor: 'm1.small'},
            group: {
              uuid: 'g-santi',
              name: 'santi',
              policy: 'soft-anti-affinity',
              rules: {},
              members: [...instancesOn(15), ...instancesOn(17).slice(0, 2)],
              hosts: [],
            },
          },
        ]
      : []

    it.each(scenarios.map((s) => [s.name, s] as const))(
      '%s',
      (_name, sc) => {
        const spec = buildRequestSpec(model, sc.boot, cfg)
        if (sc.group) spec.group = {...sc.group, members: new Set(sc.group.members)}
        const ctx: FilterContext = {cfg, now: new Date(model.snapshot.captured_at), numaFits: new Map()}
        const engine: Record<string, string[]> = {}
        for (const name of FILTERS_HERE) {
          const f = FILTERS[name]
          if (!f) throw new Error(`no filter ${name}`)
          engine[name] = hosts.filter((h) => f.hostPasses(h, spec, ctx) === null).map((h) => h.nodename)
        }
        const {weighers} = resolveWeighers(WEIGHERS_HERE)
        // nova's CPUWeigher raises TypeError on a node whose usage was never reported (ratio None):
        // such nodes are left out of the weighing on both sides
        const unweighed = hosts.filter((h) => h.usageNotReported).map((h) => h.nodename)
        const weighed = weighHosts(
          hosts.filter((h) => !h.usageNotReported),
          spec,
          weighers,
          cfg,
        )

        const byUuid = new Map(model.snapshot.nova.services.map((x) => [`${x.cell_uuid}/${x.host ?? ''}/${x.binary ?? ''}`, x]))
        const nova = runNova<{filters: Record<string, string[]>; weighed: Array<[string, number]>}>(
          {
            mode: 'filters',
            now: model.snapshot.captured_at,
            conf,
            filters: FILTERS_HERE,
            weighers: WEIGHERS_HERE,
            unweighed,
            hosts: hosts.map((h) => ({
              cell_uuid: h.cellUuid,
              compute_node: h.cn,
              service: byUuid.get(`${h.cellUuid}/${h.host}/nova-compute`),
              aggregates: h.aggregates.map((a) => ({id: a.id, uuid: a.uuid, name: a.name, metadata: a.metadata, hosts: a.hosts})),
              instances: [...h.instances],
            })),
            spec: {
              flavor: {
                vcpus: spec.flavor.vcpus,
                memory_mb: spec.flavor.memory_mb,
                root_gb: spec.flavor.root_gb,
                ephemeral_gb: spec.flavor.ephemeral_gb,
                swap: spec.flavor.swap,
                extra_specs: spec.extraSpecs,
              },
              image_id: spec.image.id,
              image_properties: spec.image.properties,
              project_id: spec.projectId,
              availability_zone: spec.availabilityZone,
              hints: spec.hints,
              group: sc.group ?? null,
              // InstancePCIRequest.spec as nova builds it from an alias: device_type becomes dev_type
              pci_requests: spec.pciRequests.map((r) => ({
                count: r.count,
                alias: r.alias,
                spec: [
                  Object.fromEntries(
                    Object.entries({vendor_id: r.spec.vendor_id, product_id: r.spec.product_id, dev_type: r.spec.device_type}).filter(
                      ([, v]) => v !== undefined,
                    ),
                  ),
                ],
              })),
            },
          },
          release,
        )

        // every filter must have refused somebody in some scenario for this to mean much; per scenario
        // the verdicts must agree host by host
        for (const name of FILTERS_HERE) expect({filter: name, hosts: engine[name]}).toEqual({filter: name, hosts: nova.filters[name]})
        expect(weighed.map((w) => w.hs.nodename)).toEqual(nova.weighed.map(([n]) => n))
        weighed.forEach((w, i) => expect(w.weight).toBeCloseTo((nova.weighed[i] as [string, number])[1], 9))
      },
      60_000,
    )

    it('the scenarios exercise refusals of most filters', () => {
      // guards against a generator change making every comparison trivially "all hosts pass"
      const refusing = new Set<string>()
      for (const sc of scenarios) {
        const spec = buildRequestSpec(model, sc.boot, cfg)
        if (sc.group) spec.group = {...sc.group, members: new Set(sc.group.members)}
        const ctx: FilterContext = {cfg, now: new Date(model.snapshot.captured_at), numaFits: new Map()}
        for (const name of FILTERS_HERE) if (hosts.some((h) => FILTERS[name]?.hostPasses(h, spec, ctx) !== null)) refusing.add(name)
      }
      expect(FILTERS_HERE.filter((f) => !refusing.has(f))).toEqual([])
    })
  },
)
