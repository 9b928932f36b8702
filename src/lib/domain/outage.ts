/**
 * The outage rule: while a cell cannot be read, a consumer (instance, migration) or a provider is
 * judged only when the readable data proves the dark cell plays no part in it. Checks leave what it
 * names undecided; repairs/outage.ts refuses write steps whose premise it names.
 */
import type {CloudModel} from './model.js'
import {ProviderNodes} from './provider-nodes.js'
import type {CellInfo, Instance, InstanceMapping, ResourceProvider} from './snapshot.js'

/** Where the snapshot puts an instance uuid: its rows in the cells and its instance mapping. */
export interface InstanceWhereabouts {
  /** Every row of the uuid (model.instancesByUuid). */
  rowsOf(uuid: string): Instance[] | undefined
  /** Its instance mapping (the last of the uuid in nova_api.instance_mappings). */
  mappingOf(uuid: string): InstanceMapping | undefined
}

export class OutageRule {
  constructor(
    private readonly model: CloudModel,
    private readonly nodes: ProviderNodes = new ProviderNodes(model),
    private readonly where: InstanceWhereabouts = modelWhereabouts(model),
  ) {}

  /**
   * The unreadable cells an instance (or migration) uuid may live in, [] when the readable data
   * proves where it is (always [] while every cell was read). The proof is its instance mapping
   * naming a readable cell that holds a row of it. A mapping naming an unreadable cell leaves that
   * cell; none, one with no cell, or one naming a readable cell without its row leaves every
   * unreadable cell possible, since then the mapping itself is wrong.
   */
  unreadableHomesOf(uuid: string): string[] {
    const home = this.provenHome(uuid)
    return Array.isArray(home) ? home : []
  }

  /**
   * For one allocation consumer: [] when every place it could live was read, else the unreadable
   * cells it may live in. Its instance (a migration's instance) must be proven in a readable cell
   * (unreadableHomesOf), and every non-sharing provider it holds allocations on (or a step would
   * write to) must stand for a live compute node read in that same cell. Neither mapping is trusted
   * alone: in seed 004's double fault the instance runs in cell1 while its instance mapping points at
   * an ERROR copy in cell0, and its host's host mapping at cell0 too; only its compute node, which
   * was not read, would place it. A provider whose live compute node was not read, or was read in
   * another cell than the instance's, may stand for a host of any unreadable cell.
   */
  unreadableCellsOfConsumer(consumer: string, providers: Iterable<ResourceProvider>): string[] {
    const down = this.model.unavailableCells
    if (down.length === 0) return []
    const migration = this.model.migrationsByUuid.get(consumer)
    const home = this.provenHome(migration?.instance_uuid ?? consumer)
    if (Array.isArray(home)) return home
    for (const rp of providers) {
      if (this.nodes.isSharing(rp)) continue
      const root = this.model.rootOf(rp)
      if (this.nodes.isSharing(root)) continue
      if (this.nodes.computeNodeOf(root)?.cell_uuid !== home.uuid) return down.map((c) => c.uuid)
    }
    return []
  }

  /**
   * The unreadable cells the host a (root) provider stands for may belong to: [] when its live
   * compute node was read in a readable cell, else every unreadable cell. Host mappings are not
   * proof (they may be as wrong as the instance mappings), and sharing providers belong to no cell.
   */
  unreadableCellsOfProvider(rp: ResourceProvider): string[] {
    const down = this.model.unavailableCells
    if (down.length === 0 || this.nodes.isSharing(rp)) return []
    return this.nodes.computeNodeOf(this.model.rootOf(rp)) ? [] : down.map((c) => c.uuid)
  }

  /** The readable cell an instance uuid is proven to be in, or the unreadable cells it may be in. */
  private provenHome(uuid: string): CellInfo | string[] {
    const down = this.model.unavailableCells
    if (down.length === 0) return []
    const cellId = this.where.mappingOf(uuid)?.cell_id ?? null
    const cell = cellId === null ? undefined : this.model.cellsById.get(cellId)
    if (cell && cell.status !== 'available') return [cell.uuid]
    if (cell && (this.where.rowsOf(uuid) ?? []).some((i) => i.cell_uuid === cell.uuid)) return cell
    return down.map((c) => c.uuid)
  }
}

/** InstanceWhereabouts read from the model alone (the audit passes its own, shared indexes). */
export function modelWhereabouts(model: CloudModel): InstanceWhereabouts {
  let mappings: Map<string, InstanceMapping> | undefined
  return {
    rowsOf: (uuid) => model.instancesByUuid.get(uuid),
    mappingOf(uuid) {
      if (!mappings) {
        mappings = new Map()
        // Later rows win, as AuditContext.mappingIndex keeps the last mapping of a uuid.
        for (const m of model.snapshot.nova_api.instance_mappings) mappings.set(m.instance_uuid, m)
      }
      return mappings.get(uuid)
    },
  }
}
