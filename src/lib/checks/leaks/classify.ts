/**
 * leaks: every placement allocation is explained by a consumer that should hold it there, and every
 * live instance holds what its flavor asks. Allocations are grouped per consumer and per root
 * provider (nested children belong to their root's compute node; sharing providers are judged by
 * aggregate membership), so one finding names one consumer on one compute node with the allocation
 * rows a repair must guard on.
 *
 * This walk decides, once per audit, which leak code (if any) each consumer's group earns; the
 * units word the findings. Codes exclude each other (an allocation on the wrong provider is not also
 * checked for amounts), so the decisions are taken in one place, in nova's order of precedence.
 */
import type {CloudModel} from '../../domain/model.js'
import type {Allocation, ComputeNode, Consumer, Instance, Migration, ResourceProvider} from '../../domain/snapshot.js'
import {push} from '../../util/multimap.js'
import {type AuditContext, awaitsClaim, holdsResources, isMigrationInProgress} from '../context.js'
import {AmountMatcher} from './amounts.js'
import {amountMismatchOf, consumerProblem, evacuationOf} from './predicates.js'
import {Residence} from './residence.js'
import type {Group} from './shared.js'
import type {LeakClassification, LeakVerdicts} from './verdicts.js'

export type {LeakClassification} from './verdicts.js'

const NO_MIGRATIONS: readonly Migration[] = []
const NO_ROWS: readonly Instance[] = []

export function classifyAllocations(ctx: AuditContext): LeakClassification {
  return ctx.once(classifyAllocations, () => new Classifier(ctx).run())
}

class Classifier {
  private readonly model: CloudModel
  private readonly residence: Residence
  private readonly amounts: AmountMatcher
  private readonly out: LeakClassification = {
    verdicts: {deleted: [], unknown: [], finished: [], wrongProvider: [], evacuation: [], missing: [], amounts: [], incomplete: [], undecidedByCell: new Map()},
    flaggedConsumers: new Set(),
    flaggedInstances: new Set(),
    undecidedConsumers: new Set(),
  }

  /** Whether a cell could not be read (model.unavailableCells filters the cells on each call: asked once, not per consumer). */
  private readonly someCellDark: boolean

  constructor(private readonly ctx: AuditContext) {
    this.model = ctx.model
    this.someCellDark = ctx.model.unavailableCells.length > 0
    this.residence = new Residence(ctx)
    this.amounts = new AmountMatcher(ctx.model.rc)
  }

  private get v(): LeakVerdicts {
    return this.out.verdicts
  }

  run(): LeakClassification {
    const {model, ctx} = this
    // Joins against the consumer index, each probing it with the other table's uuids in that table's
    // order: the index's keys (allocation rows) are compact in memory, instance rows with their blobs
    // are not, so probing an instance map with 300k consumer uuids would be the slow direction.
    const instanceRows = ctx.instanceRows
    /** Live instances holding no allocation, in instancesByUuid order (judged after the consumers). */
    const unallocated: Array<[string, Instance[]]> = []
    for (let k = 0; k < instanceRows.size; k++) {
      if (instanceRows.orderConsumer[k] >= 0) continue
      const rows = instanceRows.order(k)
      const live = ctx.liveOf(rows[0].uuid, rows)
      if (live) unallocated.push([rows[0].uuid, live])
    }
    /** placement.consumers row of consumer i (the last one of its uuid, as a uuid-keyed map keeps). */
    const consumerRows: Array<Consumer | undefined> = new Array(model.consumerIds.length)
    let hint = 0
    const consumers = model.snapshot.placement.consumers
    for (let i = 0; i < consumers.length; i++) {
      const c = consumers[i]
      const index = model.consumerIndex.near(c.uuid, hint)
      if (index !== undefined) consumerRows[(hint = index + 1) - 1] = c
    }
    // In-progress migrations by consumer position: a probe per migration, not one per consumer.
    const movingAt: Array<Migration[] | undefined> = new Array(model.consumerIds.length)
    for (const [uuid, list] of ctx.inProgressByInstance) {
      const index = model.consumerIndex.get(uuid)
      if (index !== undefined) movingAt[index] = list
    }
    for (let index = 0; index < model.consumerIds.length; index++) {
      const consumer = model.consumerIds[index]
      const rows = instanceRows.ofConsumer(index)
      const live = rows && ctx.liveOf(consumer, rows)
      const groups = this.groupAllocations(model.allocationsOf(index))
      if (groups.length === 0) continue
      this.judgeConsumer(consumer, groups, live, rows ?? NO_ROWS, consumerRows[index], instanceRows.nodeListOfConsumer(index), movingAt[index] ?? NO_MIGRATIONS)
    }
    // Reverse direction: live instances that should hold allocations and hold none.
    for (const [uuid, live] of unallocated) this.judgeUnallocated(uuid, live[0])
    return this.out
  }

  /**
   * Where a provider's allocations are judged: the provider itself when sharing, else its root. Made
   * once per provider id: 300k consumers sit on 10k providers, and each answer is four lookups.
   */
  private targetOf(id: number): {rp: ResourceProvider; sharing: boolean} | null {
    let t = this.targets.get(id)
    if (t === undefined) {
      const {model, ctx} = this
      const rp = model.providersById.get(id)
      if (!rp)
        t = null // placement's foreign key makes this impossible; nothing to judge against
      else {
        const sharing = ctx.isSharing(rp)
        const target = sharing ? rp : model.rootOf(rp)
        t = {rp: target, sharing: sharing || ctx.isSharing(target)}
      }
      this.targets.set(id, t)
    }
    return t
  }

  private readonly targets = new Map<number, {rp: ResourceProvider; sharing: boolean} | null>()

  /** Allocations per root (or sharing) provider; most consumers hold all of them on one provider. */
  private groupAllocations(allocs: Allocation[]): Group[] {
    const firstId = allocs[0].resource_provider_id
    let onOne = true
    for (let i = 1; i < allocs.length; i++) if (allocs[i].resource_provider_id !== firstId) onOne = false
    if (onOne) {
      const t = this.targetOf(firstId)
      // The model's own array: groups are read, never modified, and findings copy the rows.
      return t ? [{rp: t.rp, sharing: t.sharing, allocations: allocs}] : []
    }
    const groups: Group[] = []
    for (const a of allocs) {
      const t = this.targetOf(a.resource_provider_id)
      if (!t) continue
      // A consumer holds allocations on one or two providers: a list scan beats a Map per consumer.
      let g = groups.find((x) => x.rp === t.rp)
      if (!g) groups.push((g = {rp: t.rp, sharing: t.sharing, allocations: []}))
      g.allocations.push(a)
    }
    return groups
  }

  private judgeConsumer(
    consumer: string,
    groups: Group[],
    live: Instance[] | undefined,
    rows: readonly Instance[],
    row: Consumer | undefined,
    ownList: readonly Instance[] | undefined,
    moving: readonly Migration[],
  ): void {
    if (this.someCellDark) {
      const dark = this.darkCellsOf(consumer, groups)
      if (dark.length > 0) return this.undecide(consumer, dark)
    }
    if (live && live.length > 0) return this.judgeInstanceConsumer(consumer, live, groups, row, ownList, moving)
    const migration = this.model.migrationsByUuid.get(consumer)
    if (migration && migration.deleted === 0) return this.judgeMigrationConsumer(consumer, migration, groups, row)
    // The instance was deleted after a move whose allocation nova could not remove (placement
    // answered 409 in _delete_allocation_after_move: "the allocation held by the migration is
    // leaked"); instance_destroy soft-deleted the migration row with it. The consumer is that
    // migration's, over whatever its status says.
    if (migration && rows.length === 0) {
      for (const g of groups) this.flag(consumer, this.v.finished, {consumer, g, m: migration, row})
      return
    }
    const deletedRows = rows.filter((i) => i.deleted !== 0)
    if (rows.length > 0 && deletedRows.length === rows.length) {
      for (const g of groups) this.flag(consumer, this.v.deleted, {consumer, g, deletedRows, row})
      return
    }
    if (rows.length > 0) return // only hidden copies (cross-cell resize bookkeeping): nova owns them
    if (this.ctx.buildRequestUuids.has(consumer)) return // being built: the scheduler claims before the cell row exists
    for (const g of groups) this.flag(consumer, this.v.unknown, {consumer, g, row})
  }

  /** `moving`: the instance's in-progress migrations (ctx.inProgressByInstance). */
  private judgeInstanceConsumer(
    consumer: string,
    live: Instance[],
    groups: Group[],
    row: Consumer | undefined,
    ownList: readonly Instance[] | undefined,
    moving: readonly Migration[],
  ): void {
    const inst = live[0]
    // Indexed loops and no closures here: this runs once per consumer (300k on a 10k cloud), mostly
    // before the JIT optimises it, and a closure over a loop variable costs a context per iteration.
    // A build (or unshelve) in flight holds the scheduler's allocations wherever it chose: nothing
    // to compare them with until nova-compute claims on a host.
    for (let i = 0; i < live.length; i++) if (awaitsClaim(live[i])) return this.checkConsumerRow(consumer, groups, row, inst)
    let aggs: Set<string> | undefined
    let allFine = true
    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi]
      if (g.sharing) {
        aggs ??= this.aggregatesOf(live)
        if (this.residence.sharesWith(aggs, g.rp)) continue
        allFine = false
        this.flag(consumer, this.v.wrongProvider, {kind: 'sharing', consumer, g, inst, aggs})
        continue
      }
      const cn = this.ctx.computeNodeOf(g.rp)
      if (cn ? this.residence.livesOn(live, cn, ownList) : this.standsForNode(live, g.rp)) continue
      if (this.touchedBy(moving, cn, g.rp)) continue
      allFine = false
      const evacuation = evacuationOf(this.ctx, consumer, cn, g, inst)
      if (evacuation) this.flag(consumer, this.v.evacuation, {consumer, g, inst, evacuation})
      else this.flag(consumer, this.v.wrongProvider, {kind: 'instance', consumer, g, inst, cn})
    }
    if (allFine) this.checkConsumerRow(consumer, groups, row, inst)
    // Amounts are compared only for one live copy that stays where it is and holds nothing amiss.
    if (!allFine || moving.length > 0 || inst.host === null || !holdsResources(inst) || live.length > 1) return
    const mismatch = amountMismatchOf(this.ctx, this.amounts, inst, groups)
    if (!mismatch) return
    this.out.flaggedInstances.add(consumer)
    this.flag(consumer, this.v.amounts, {consumer, inst, groups, row, ...mismatch})
  }

  /** The aggregates of every live copy's nodes, in the copies' order. */
  private aggregatesOf(live: Instance[]): Set<string> {
    const aggs = new Set<string>()
    for (let i = 0; i < live.length; i++) for (const a of this.residence.instanceAggregates(live[i])) aggs.add(a)
    return aggs
  }

  /** Whether the provider still stands for the node of one of the live copies (residence.standsForNodeOf). */
  private standsForNode(live: Instance[], rp: ResourceProvider): boolean {
    for (let i = 0; i < live.length; i++) if (this.residence.standsForNodeOf(rp, live[i])) return true
    return false
  }

  /** Whether one of the migrations leaves or reaches the provider's node (residence.touches). */
  private touchedBy(moving: readonly Migration[], cn: ComputeNode | undefined, rp: ResourceProvider): boolean {
    for (let i = 0; i < moving.length; i++) if (this.residence.touches(moving[i], cn, rp)) return true
    return false
  }

  private judgeMigrationConsumer(consumer: string, m: Migration, groups: Group[], row: Consumer | undefined): void {
    const inProgress = isMigrationInProgress(m)
    let allFine = true
    for (const g of groups) {
      if (inProgress && (g.sharing || this.residence.touches(m, this.ctx.computeNodeOf(g.rp), g.rp))) continue
      allFine = false
      if (inProgress) this.flag(consumer, this.v.wrongProvider, {kind: 'migration', consumer, g, m})
      else this.flag(consumer, this.v.finished, {consumer, g, m, row})
    }
    if (allFine) this.checkConsumerRow(consumer, groups, row)
  }

  private checkConsumerRow(consumer: string, groups: Group[], row: Consumer | undefined, inst?: Instance): void {
    const problem = consumerProblem(this.ctx, row)
    if (problem) this.flag(consumer, this.v.incomplete, {consumer, groups, row, inst, problem})
  }

  private judgeUnallocated(uuid: string, inst: Instance): void {
    const {ctx} = this
    if (inst.host === null || !holdsResources(inst) || awaitsClaim(inst)) return
    const dark = ctx.outage.unreadableHomesOf(uuid)
    if (dark.length > 0) return this.undecide(uuid, dark)
    const expected = ctx.expected(inst)
    if (!expected.ok || Object.keys(expected.value.resources).length === 0) return
    const cn = this.model.nodeOfInstance(inst)
    const rp = cn && ctx.providerOf(cn)
    this.out.flaggedInstances.add(uuid)
    this.flag(uuid, this.v.missing, {uuid, inst, expected: expected.value, cn, rp})
  }

  /** The outage rule (ctx.outage.unreadableCellsOfConsumer): the unreadable cells a consumer's judgement depends on. */
  private darkCellsOf(consumer: string, groups: Group[]): string[] {
    return this.ctx.outage.unreadableCellsOfConsumer(
      consumer,
      groups.map((g) => g.rp),
    )
  }

  private undecide(consumer: string, cells: string[]): void {
    this.out.undecidedConsumers.add(consumer)
    for (const c of cells) push(this.v.undecidedByCell, c, consumer)
  }

  private flag<T>(consumer: string, list: T[], verdict: T): void {
    this.out.flaggedConsumers.add(consumer)
    list.push(verdict)
  }
}
