import {Flags} from '../../lib/cli/oclif.js'
import {CloudctlCommand} from '../../lib/cli/base-command.js'
import {sourceFlags, sourceOptionsFrom} from '../../lib/cli/source-flags.js'
import {buildModel} from '../../lib/domain/model.js'
import {ExitCode} from '../../lib/errors.js'
import {releaseLine} from '../../lib/output/snapshot-formatter.js'
import {renderTable} from '../../lib/output/table.js'
import {urlWhere} from '../../lib/output/url-text.js'
import {redact} from '../../lib/util/redact.js'
import type {ListingSpec} from '../../lib/output/formats.js'

export interface CellRow {
  name: string | null
  uuid: string
  state: 'available' | 'unavailable'
  disabled: boolean
  error: string | null
  transport_url: string | null
  database_connection: string | null
  hosts: number | null
  host_mappings: number
  instances: number | null
  instance_mappings: number
  /** The release this cell's schema says; null when not recorded or not read. */
  release: string | null
}

export default class CellsList extends CloudctlCommand<typeof CellsList> {
  static override listing: ListingSpec = {
    rows: 'cells',
    columns: [
      {key: 'name', label: 'Name'},
      {key: 'uuid', label: 'UUID'},
      {key: 'state', label: 'State'},
      {key: 'disabled', label: 'Disabled'},
      {key: 'transport_url', label: 'Transport URL'},
      {key: 'database_connection', label: 'Database Connection'},
      {key: 'hosts', label: 'Hosts (mapped)'},
      {key: 'instances', label: 'Instances (mapped)'},
    ],
    more: [{key: 'error'}, {key: 'host_mappings'}, {key: 'instance_mappings'}, {key: 'release', label: 'Release'}],
  }

  static override summary = 'Cells with their state, hosts and instance counts (passwords redacted).'

  static override description =
    'Like `nova-manage cell_v2 list_cells`, plus whether cloudctl could read each cell, its compute hosts, live instances and the mappings nova_api holds for it. Exits 3 when a cell could not be read.'

  static override examples = [
    '<%= config.bin %> <%= command.id %> --snapshot demo',
    '<%= config.bin %> <%= command.id %> --nova-conf /etc/nova/nova.conf -f value -c name -c uuid',
  ]

  static override flags = {
    ...sourceFlags,
    long: Flags.boolean({
      char: 'l',
      summary:
        "Also where each cell's database and message queue are (hosts and names; the whole URLs, passwords hidden, with -f json or -c), as nova-manage cell_v2 list_cells --verbose.",
    }),
  }

  async run(): Promise<{cells: CellRow[]}> {
    const snapshot = await this.readSnapshot(sourceOptionsFrom(this.flags))
    const model = buildModel(snapshot)
    const cells: CellRow[] = [...snapshot.cells]
      .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? ''))
      .map((c) => {
        const ok = c.status === 'available'
        const hosts = new Set(model.liveComputeNodes.filter((cn) => cn.cell_uuid === c.uuid && cn.host).map((cn) => cn.host))
        return {
          name: c.name,
          uuid: c.uuid,
          state: c.status,
          disabled: c.disabled,
          error: c.error ? redact(c.error) : null,
          transport_url: redact(c.transport_url),
          database_connection: redact(c.database_connection),
          hosts: ok ? hosts.size : null,
          host_mappings: snapshot.nova_api.host_mappings.filter((h) => h.cell_id === c.id).length,
          instances: ok ? snapshot.nova.instances.filter((i) => i.cell_uuid === c.uuid && i.deleted === 0).length : null,
          instance_mappings: snapshot.nova_api.instance_mappings.filter((m) => m.cell_id === c.id).length,
          release: snapshot.release?.cells[c.uuid]?.name ?? null,
        }
      })
    const recorded = snapshot.release !== undefined
    // One line per cell at 80 columns: the uuid whole, Disabled folded into State, the mapped counts in
    // brackets (the legend says so). The URLs are far wider than 80: --long prints them below the
    // table, one line each, without credentials or query; -f json and -c keep them whole (redacted).
    this.out((d) =>
      renderTable(
        d,
        ['Name', 'UUID', ...(recorded ? ['Release'] : []), 'State', 'Hosts', 'Instances'],
        cells.map((c) => [
          c.name ?? '',
          c.uuid,
          ...(recorded ? [c.release ?? '?'] : []),
          (c.state === 'available' ? 'available' : `UNAVAILABLE: ${c.error ?? ''}`) + (c.disabled ? ', disabled' : ''),
          `${c.hosts ?? '?'} (${c.host_mappings})`,
          `${c.instances ?? '?'} (${c.instance_mappings})`,
        ]),
        {wrap: [recorded ? 3 : 2]},
      ),
    )
    this.out('Hosts, Instances: live ones (mapped in nova_api).')
    if (this.flags.long) {
      const width = Math.max(...cells.map((c) => (c.name ?? c.uuid).length))
      this.out('Connections (user, password and options left out; -f json has the URLs):')
      for (const c of cells) {
        const name = (c.name ?? c.uuid).padEnd(width)
        this.out(`  ${name}  database  ${urlWhere(c.database_connection)}\n  ${' '.repeat(width)}  transport ${urlWhere(c.transport_url)}`)
      }
    }
    this.out(releaseLine(snapshot.release ?? null))
    this.setExit(cells.some((c) => c.state !== 'available') ? ExitCode.FINDINGS : ExitCode.OK)
    return {cells}
  }
}
