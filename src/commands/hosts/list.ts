import {Flags} from '../../lib/cli/oclif.js'

import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {requireKnownCell} from '../../lib/cli/require-known.js'
import {sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {defaultAvailabilityZone, readNovaConf} from '../../lib/config/nova-conf.js'
import {hostZones, NOVA_DEFAULT_AVAILABILITY_ZONE} from '../../lib/domain/availability-zone.js'
import {buildModel, type CloudModel} from '../../lib/domain/model.js'
import {SHARING_TRAIT, summaryCapacityOf} from '../../lib/domain/placement-capacity.js'
import {serviceUp} from '../../lib/domain/service-state.js'
import type {ResourceProvider} from '../../lib/domain/snapshot.js'
import type {Display} from '../../lib/output/display.js'
import {renderTable} from '../../lib/output/table.js'
import type {ListingSpec} from '../../lib/output/formats.js'

export interface HostRow {
  host: string | null
  node: string | null
  /** null: a provider no compute node row of any readable cell has (see orphanProviders). */
  cell: string | null
  service_state: 'up' | 'down' | 'no service' | 'no compute node'
  service_status: 'enabled' | 'disabled' | null
  disabled_reason: string | null
  forced_down: boolean
  provider_uuid: string | null
  /** null on a provider without a compute node: nova gives a zone to hosts, and it has none. */
  availability_zone: string | null
  aggregates: string[]
  // used/total: the compute node's own counts (null on a provider without a live compute node).
  vcpus: {used: number | null; total: number | null; placement_used: number | null; placement_capacity: number | null}
  memory_mb: {used: number | null; total: number | null; placement_used: number | null; placement_capacity: number | null}
  disk_gb: {used: number | null; total: number | null; placement_used: number | null; placement_capacity: number | null}
  pcpus: {placement_used: number | null; placement_capacity: number | null}
}

/** The zone nova-api gives hosts in no zone aggregate: --nova-conf's default_availability_zone, else nova's. */
const defaultZone = (novaConf: string | undefined): string =>
  novaConf === undefined ? NOVA_DEFAULT_AVAILABILITY_ZONE : defaultAvailabilityZone(readNovaConf(novaConf))

export default class HostsList extends CloudctlCommand<typeof HostsList> {
  static override listing: ListingSpec = {
    rows: 'hosts',
    columns: [
      {key: 'host', label: 'Host'},
      {key: 'node', label: 'Node'},
      {key: 'cell', label: 'Cell'},
      {key: 'service_state', label: 'Service'},
      {key: 'provider_uuid', label: 'Provider'},
      {key: 'availability_zone', label: 'AZ'},
      {key: 'aggregates', label: 'Aggregates'},
      {key: 'vcpus.used', label: 'vCPU'},
      {key: 'memory_mb.used', label: 'RAM MB'},
      {key: 'disk_gb.used', label: 'Disk GB'},
      {key: 'pcpus.placement_used', label: 'PCPU'},
    ],
    more: [
      {key: 'service_status'},
      {key: 'disabled_reason'},
      {key: 'forced_down'},
      ...['vcpus', 'memory_mb', 'disk_gb'].flatMap((k) => [{key: `${k}.total`}, {key: `${k}.placement_used`}, {key: `${k}.placement_capacity`}]),
      {key: 'pcpus.placement_capacity'},
    ],
  }

  static override summary = 'Compute hosts: cell, service state, provider, AZ, aggregates, usage versus capacity.'

  static override description = `Like \`openstack hypervisor list --long\` with what placement knows beside it: every live compute node with its cell, the state of its nova-compute service (up/down the way nova's servicegroup decides, enabled/disabled and why), its resource provider, availability zone and aggregates, and usage versus capacity as the compute node row counts it and as placement does (capacity = (total - reserved) x allocation_ratio). After the hosts (without --cell), the resource providers that stand for a compute node nova no longer has (deleted, or a hypervisor's old name), as "stale": \`cloudctl audit providers\` says what to do with them.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot demo',
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf --cell cell1 -f csv',
    '<%= config.bin %> <%= command.id %> --snapshot snap.json.gz -f value -c host -c service_state',
  ]

  static override flags = {
    ...sourceFlags,
    cell: Flags.string({summary: 'Only the hosts of this cell (name or uuid).'}),
    long: Flags.boolean({
      char: 'l',
      summary:
        "Also the node, the service's disabled reason, the resource provider, the aggregates and the compute node's own counts (several lines per host).",
    }),
  }

  async run(): Promise<{hosts: HostRow[]}> {
    const snapshot = await this.readSnapshot(sourceOptionsFrom(this.flags))
    const model = buildModel(snapshot)
    const cellFilter = this.flags.cell
    requireKnownCell(snapshot, cellFilter)
    const zoneOf = hostZones(snapshot.nova_api.aggregates, defaultZone(this.flags['nova-conf'] ?? (process.env.CLOUDCTL_NOVA_CONF || undefined)))
    const aggregatesOf = (host: string | null) => snapshot.nova_api.aggregates.filter((a) => host !== null && a.hosts.includes(host))
    const placement = (rpId: number | undefined, rc: string) => {
      const rcId = model.rc.id(rc)
      if (rpId === undefined || rcId === undefined) return {placement_used: null, placement_capacity: null}
      const inv = model.inventory(rpId, rcId)
      if (!inv) return {placement_used: null, placement_capacity: null}
      return {placement_used: model.usage(rpId, rcId), placement_capacity: summaryCapacityOf(inv)}
    }
    const hosts: HostRow[] = model.liveComputeNodes
      .filter((cn) => cellFilter === undefined || model.cellLabel(cn.cell_uuid) === cellFilter || cn.cell_uuid === cellFilter)
      .map((cn) => {
        const svc = model.serviceOf(cn)
        const rp = cn.uuid ? model.providersByUuid.get(cn.uuid) : undefined
        const aggs = aggregatesOf(cn.host)
        return {
          host: cn.host,
          node: cn.hypervisor_hostname,
          cell: model.cellLabel(cn.cell_uuid),
          service_state: svc ? (serviceUp(svc, snapshot.captured_at) ? 'up' : 'down') : 'no service',
          service_status: svc ? (svc.disabled ? 'disabled' : 'enabled') : null,
          disabled_reason: svc?.disabled_reason ?? null,
          forced_down: Boolean(svc?.forced_down),
          provider_uuid: rp?.uuid ?? null,
          availability_zone: zoneOf(cn.host),
          aggregates: aggs.map((a) => a.name ?? a.uuid ?? String(a.id)),
          vcpus: {used: cn.vcpus_used, total: cn.vcpus, ...placement(rp?.id, 'VCPU')},
          memory_mb: {used: cn.memory_mb_used, total: cn.memory_mb, ...placement(rp?.id, 'MEMORY_MB')},
          disk_gb: {used: cn.local_gb_used, total: cn.local_gb, ...placement(rp?.id, 'DISK_GB')},
          pcpus: placement(rp?.id, 'PCPU'),
        } satisfies HostRow
      })
    if (cellFilter === undefined) {
      // Providers that stand for a compute node nova no longer has (a deleted node, a renamed hypervisor's
      // old provider): they still hold capacity and allocations, so they are listed, after the hosts.
      for (const rp of orphanProviders(model)) {
        const gone = (model.computeNodesByUuid.get(rp.uuid) ?? []).find((cn) => cn.deleted !== 0)
        hosts.push({
          host: gone?.host ?? null,
          node: rp.name ?? gone?.hypervisor_hostname ?? null,
          cell: gone ? model.cellLabel(gone.cell_uuid) : null,
          service_state: 'no compute node',
          service_status: null,
          disabled_reason: null,
          forced_down: false,
          provider_uuid: rp.uuid,
          availability_zone: null,
          aggregates: aggregatesOf(gone?.host ?? null).map((a) => a.name ?? a.uuid ?? String(a.id)),
          vcpus: {used: null, total: null, ...placement(rp.id, 'VCPU')},
          memory_mb: {used: null, total: null, ...placement(rp.id, 'MEMORY_MB')},
          disk_gb: {used: null, total: null, ...placement(rp.id, 'DISK_GB')},
          pcpus: placement(rp.id, 'PCPU'),
        })
      }
    }
    const orphan = (h: HostRow) => (h.service_state === 'no compute node' ? 1 : 0)
    hosts.sort(
      (a, b) =>
        orphan(a) - orphan(b) ||
        (a.cell ?? '').localeCompare(b.cell ?? '') ||
        (a.host ?? '').localeCompare(b.host ?? '') ||
        (a.node ?? '').localeCompare(b.node ?? ''),
    )
    this.out((d) =>
      this.flags.long
        ? longTable(d, hosts)
        : shortTable(
            d,
            hosts,
            model.unavailableCells.map((c) => c.name ?? c.uuid),
          ),
    )
    return {hosts}
  }
}

/**
 * Root providers that stand for a compute node (not sharing ones) which no live compute node of a
 * readable cell claims, by uuid or, for a node whose uuid has no provider, by its hypervisor_hostname
 * (the provider.uuid-mismatch case: that provider is the node's, not an orphan). The stale providers
 * of `audit providers`, as the HTML report shows them; with a cell unread, its nodes may claim some.
 */
function orphanProviders(model: CloudModel): ResourceProvider[] {
  const claimedUuids = new Set(model.liveComputeNodes.map((cn) => cn.uuid).filter((u): u is string => u !== null))
  const nodeNames = new Set(model.liveComputeNodes.filter((cn) => !(cn.uuid && model.providersByUuid.has(cn.uuid))).map((cn) => cn.hypervisor_hostname))
  return model.snapshot.placement.resource_providers.filter(
    (rp) =>
      rp.parent_provider_id === null &&
      !model.traitsByProvider.get(rp.id)?.has(SHARING_TRAIT) &&
      !claimedUuids.has(rp.uuid) &&
      !(rp.name !== null && nodeNames.has(rp.name)),
  )
}

type Usage = {used?: number | null; total?: number | null; placement_used: number | null; placement_capacity: number | null}

/**
 * What the scheduler goes by, as a share: placement's used of its capacity; '*' marks a host without
 * a provider, where the compute node's own count is all there is. --long has the figures.
 */
function usage(r: Usage): string {
  const pct = (used: number, cap: number) => (cap > 0 ? `${Math.round((100 * used) / cap)}%` : '-')
  if (r.placement_capacity !== null) return pct(r.placement_used ?? 0, r.placement_capacity)
  return r.used !== undefined && r.used !== null && r.total !== undefined && r.total !== null ? `${pct(r.used, r.total)}*` : ''
}

function state(h: HostRow): string {
  // Short enough that the row stays one line at 80 columns; the note under the table says what it means.
  if (h.service_state === 'no compute node') return 'stale'
  if (h.forced_down) return 'forced down'
  if (h.service_status === 'disabled') return `${h.service_state}, disabled`
  return h.service_state
}

/**
 * One line per host, within 80 columns for the hosts nova names (openstack hypervisor list's shape):
 * placement's usage, which the scheduler goes by. --long (or -c) has the rest.
 */
function shortTable(d: Display, hosts: HostRow[], unread: string[]): string {
  const pcpu = hosts.some((h) => h.pcpus.placement_capacity !== null)
  const head = ['Host', 'Cell', 'State', 'AZ', 'vCPU', 'RAM', 'Disk', ...(pcpu ? ['PCPU'] : [])]
  const rows = hosts.map((h) => [
    h.host === null ? (h.node ?? h.provider_uuid) : h.node !== null && h.node !== h.host ? `${h.host} (${h.node})` : h.host,
    h.cell ?? '-',
    state(h),
    h.availability_zone ?? '-',
    usage(h.vcpus),
    usage(h.memory_mb),
    usage(h.disk_gb),
    ...(pcpu ? [usage(h.pcpus)] : []),
  ])
  const starred = hosts.some((h) => h.vcpus.placement_capacity === null && h.vcpus.used !== null)
  const orphans = hosts.some((h) => h.service_state === 'no compute node')
  const note = [
    "Used, in % of placement's capacity ((total - reserved) x allocation ratio).",
    ...(starred ? ["* no resource provider: the compute node's own count."] : []),
    ...(orphans ? ['stale: a provider with no compute node; see `cloudctl audit providers`.'] : []),
    // A cell that could not be read is not empty: its compute nodes may be the ones these providers stand for.
    ...(orphans && unread.length > 0 ? [`Not read: cell ${unread.join(', ')}; a "stale" provider may have its compute node there.`] : []),
    '--long: node, provider, aggregates and the figures.',
  ]
  return [renderTable(d, head, rows, {wrap: [2], align: ['left', 'left', 'left', 'left', 'right', 'right', 'right', 'right']}), ...note].join('\n')
}

function longTable(d: Display, hosts: HostRow[]): string {
  const use = (r: Usage) =>
    [
      r.used !== undefined && r.used !== null ? `${r.used}/${r.total}` : null,
      r.placement_capacity !== null ? `rp ${r.placement_used}/${r.placement_capacity}` : null,
    ]
      .filter(Boolean)
      .join('\n')
  return renderTable(
    d,
    ['Host', 'Node', 'Cell', 'Service', 'Provider', 'AZ', 'Aggregates', 'vCPU', 'RAM MB', 'Disk GB', 'PCPU'],
    hosts.map((h) => [
      h.host ?? '',
      h.node ?? '',
      h.cell ?? '',
      [h.service_state, h.service_status, h.forced_down ? 'forced down' : null, h.disabled_reason].filter(Boolean).join('\n'),
      h.provider_uuid ?? 'none',
      h.availability_zone ?? '',
      h.aggregates.join('\n'),
      use(h.vcpus),
      use(h.memory_mb),
      use(h.disk_gb),
      use(h.pcpus) || '',
    ]),
    {wrap: [3, 6]},
  )
}
