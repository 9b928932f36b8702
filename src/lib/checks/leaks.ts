/**
 * leaks: every placement allocation is explained by a consumer that should hold it there, and every
 * live instance holds what its flavor asks. Allocations are grouped per consumer and per root
 * provider (nested children belong to their root's compute node; sharing providers are judged by
 * aggregate membership), so one finding names one consumer on one compute node with the allocation
 * rows a repair must guard on.
 */
import type {Finding, FindingSubject} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {Allocation, ComputeNode, Consumer, Instance, Migration, ResourceProvider} from '../domain/snapshot.js'
import {AuditContext, INCOMPLETE_CONSUMER_ID, holdsResources, isMigrationInProgress, push} from './context.js'
import type {ResourceAmounts} from './flavor-resources.js'

const REPAIR = 'cloudctl repair leaks'
const CHECKED_CLASSES = ['VCPU', 'PCPU', 'MEMORY_MB', 'DISK_GB']
const NO_MIGRATIONS: readonly Migration[] = []
const NO_ROWS: readonly Instance[] = []

interface Group {
  /** The root provider, or the sharing provider itself. */
  rp: ResourceProvider
  sharing: boolean
  allocations: Allocation[]
}

export interface LeakClassification {
  findings: Finding[]
  /** Consumers with at least one allocation finding. */
  flaggedConsumers: Set<string>
  /** Instances with an allocation.missing / amount-mismatch finding. */
  flaggedInstances: Set<string>
  /** Consumers that could not be decided because a cell is unavailable. */
  undecidedConsumers: Set<string>
}

export function checkLeaks(model: CloudModel, ctx: AuditContext = new AuditContext(model)): Finding[] {
  return classifyAllocations(ctx).findings
}

export function classifyAllocations(ctx: AuditContext): LeakClassification {
  return ctx.once('leaks', () => classify(ctx))
}

function classify(ctx: AuditContext): LeakClassification {
  const model = ctx.model
  const rc = model.rc
  const findings: Finding[] = []
  const flaggedConsumers = new Set<string>()
  const flaggedInstances = new Set<string>()
  const undecidedConsumers = new Set<string>()
  const undecidedByCell = new Map<string, string[]>()
  const unavailable = model.unavailableCells

  const allocRows = (allocs: Allocation[]) =>
    allocs.map((a) => ({id: a.id, resource_provider_id: a.resource_provider_id, resource_class: rc.name(a.resource_class_id), used: a.used}))
  const providerRow = (rp: ResourceProvider) => ({id: rp.id, uuid: rp.uuid, name: rp.name, generation: rp.generation})
  const consumerRow = (c: Consumer | undefined) => {
    if (!c) return null
    return {id: c.id, uuid: c.uuid, generation: c.generation, project: model.projectsById.get(c.project_id) ?? null, user: model.usersById.get(c.user_id) ?? null}
  }
  const instanceRow = (i: Instance) => ({
    cell_uuid: i.cell_uuid,
    id: i.id,
    uuid: i.uuid,
    host: i.host,
    node: i.node,
    vm_state: i.vm_state,
    task_state: i.task_state,
    deleted: i.deleted,
    deleted_at: i.deleted_at,
  })
  const migrationRow = (m: Migration) => ({
    cell_uuid: m.cell_uuid,
    id: m.id,
    uuid: m.uuid,
    instance_uuid: m.instance_uuid,
    migration_type: m.migration_type,
    status: m.status,
    source_compute: m.source_compute,
    source_node: m.source_node,
    dest_compute: m.dest_compute,
    dest_node: m.dest_node,
    updated_at: m.updated_at,
  })

  const groupSubject = (consumer: string, g: Group, cellUuid?: string): FindingSubject => {
    const cn = g.sharing ? undefined : ctx.computeNodeOf(g.rp)
    const subject: FindingSubject = cn ? ctx.nodeSubject(cn) : {}
    if (!cn && g.rp.name !== null && !g.sharing) subject.node = g.rp.name
    if (cellUuid !== undefined) {
      subject.cell = ctx.cellName(cellUuid)
      subject.cell_uuid = cellUuid
    }
    subject.provider_uuid = g.rp.uuid
    subject.consumer_uuid = consumer
    if (ctx.rowsOf(consumer)) subject.instance_uuid = consumer
    return subject
  }

  const emit = (consumer: string, code: string, severity: Finding['severity'], subject: FindingSubject, message: string, evidence: Record<string, unknown>) => {
    flaggedConsumers.add(consumer)
    findings.push({check: 'leaks', code, severity, subject, message, evidence, repair: REPAIR})
  }

  const touches = (m: Migration, cn: ComputeNode | undefined, rp: ResourceProvider): boolean =>
    cn
      ? (m.source_compute === cn.host && m.source_node === cn.hypervisor_hostname) || (m.dest_compute === cn.host && m.dest_node === cn.hypervisor_hostname)
      : rp.name !== null && (m.source_node === rp.name || m.dest_node === rp.name)

  /** Aggregates of the compute node providers an instance lives on or is moving between. */
  const instanceAggregates = (inst: Instance): Set<string> => {
    const out = new Set<string>()
    const addNode = (host: string | null, node: string | null) => {
      const cn = ctx.liveComputeNodeAt(host, node)
      const rp = cn && ctx.providerOf(cn)
      if (rp) for (const a of model.aggregatesOf(rp.id)) out.add(a)
    }
    addNode(inst.host, inst.node)
    for (const m of ctx.inProgressByInstance.get(inst.uuid) ?? []) {
      addNode(m.source_compute, m.source_node)
      addNode(m.dest_compute, m.dest_node)
    }
    return out
  }

  // Whether one of the rows lives on the node (host and node equal). The node's list of live
  // instances answers by identity, without reading each row's host and node strings: membership
  // means equal nodeKey, which is equal host and node when both are non-empty and hold no NUL.
  // A consumer with a single instance row knows that row's list (ctx.instanceRows): one comparison.
  const residents = new Map<ComputeNode, readonly Instance[] | null>()
  const livesOn = (live: readonly Instance[], cn: ComputeNode, ownList: readonly Instance[] | undefined): boolean => {
    let list = residents.get(cn)
    if (list === undefined) {
      const exact = cn.host && cn.hypervisor_hostname && !cn.host.includes('\u0000') && !cn.hypervisor_hostname.includes('\u0000')
      residents.set(cn, (list = exact ? model.instancesOnNode(cn.host, cn.hypervisor_hostname) : null))
    }
    if (list === null) return live.some((i) => i.host === cn.host && i.node === cn.hypervisor_hostname)
    if (ownList !== undefined) return ownList === list
    for (const i of live) for (let k = 0; k < list.length; k++) if (list[k] === i) return true
    return false
  }

  /**
   * A provider with no live compute node (its node row or nova-compute service was deleted while the
   * instance kept running) still stands for that node: the node rows of its uuid, deleted ones
   * included, or without any, the node it is named after. An instance there holds its allocation where
   * nova put it; provider.stale tells the story of the provider, and leaks does not repeat it.
   */
  const standsForNodeOf = (rp: ResourceProvider, inst: Instance): boolean => {
    const rows = model.computeNodesByUuid.get(rp.uuid)
    if (rows) return rows.some((cn) => cn.host === inst.host && cn.hypervisor_hostname === inst.node)
    return rp.name !== null && inst.host !== null && inst.node === rp.name
  }

  // Class ids whose name leads back to them: sums by id are then sums by name, as the long way adds.
  const roundTrip = new Map<number, boolean>()
  const namedOnce = (id: number): boolean => {
    let ok = roundTrip.get(id)
    if (ok === undefined) roundTrip.set(id, (ok = rc.id(rc.name(id)) === id))
    return ok
  }
  // The wanted amounts by resource class id, per shared expected result (a few dozen for 300k instances).
  const wantById = new Map<ResourceAmounts, {ids: number[]; amounts: number[]; checkedElsewhere: number[]} | null>()
  const compileWant = (want: ResourceAmounts) => {
    const ids: number[] = []
    const amounts: number[] = []
    for (const c in want) {
      const id = rc.id(c)
      if (id === undefined) return null // a class placement does not know: never allocated, never equal
      ids.push(id)
      amounts.push(want[c])
    }
    const checkedElsewhere = CHECKED_CLASSES.filter((c) => !(c in want)).flatMap((c) => rc.id(c) ?? [])
    return ids.length > 30 ? null : {ids, amounts, checkedElsewhere}
  }
  /**
   * sameAmounts(want, sums of the allocations) for the common case, without building the sums: each
   * wanted class held once with its amount, other checked classes at zero. false = decide the long way.
   */
  const holdsAsAsked = (want: ResourceAmounts, groups: Group[]): boolean => {
    let w = wantById.get(want)
    if (w === undefined) wantById.set(want, (w = compileWant(want)))
    if (!w) return false
    let seen = 0
    let matched = 0
    for (const g of groups) {
      for (const a of g.allocations) {
        if (!namedOnce(a.resource_class_id)) return false
        const k = w.ids.indexOf(a.resource_class_id)
        if (k >= 0) {
          if (seen & (1 << k) || a.used !== w.amounts[k]) return false
          seen |= 1 << k
          matched++
        } else if (a.used !== 0 && w.checkedElsewhere.includes(a.resource_class_id)) return false
      }
    }
    return matched === w.ids.length
  }

  const sharesWith = (aggs: Set<string>, rp: ResourceProvider): boolean => {
    for (const a of model.aggregatesOf(rp.id)) if (aggs.has(a)) return true
    return false
  }

  // Joins against the consumer index, each probing it with the other table's uuids in that table's
  // order: the index's keys (allocation rows) are compact in memory, instance rows with their blobs
  // are not, so probing an instance map with 300k consumer uuids would be the slow direction.
  const consumerCount = model.consumerIds.length
  const instanceRows = ctx.instanceRows
  /** All instance rows of consumer i, if it is an instance. */
  const rowsOf = instanceRows.ofConsumer
  /** Live instances holding no allocation, in instancesByUuid order (judged after the consumers). */
  const unallocated: Array<[string, Instance[]]> = []
  for (let k = 0; k < instanceRows.order.length; k++) {
    if (instanceRows.orderConsumer[k] >= 0) continue
    const rows = instanceRows.order[k]
    const live = ctx.liveOf(rows[0].uuid, rows)
    if (live) unallocated.push([rows[0].uuid, live])
  }
  /** placement.consumers row of consumer i (the last one of its uuid, as a uuid-keyed map keeps). */
  const consumerRows: Array<Consumer | undefined> = new Array(consumerCount)
  for (const c of model.snapshot.placement.consumers) {
    const index = model.consumerIndex.get(c.uuid)
    if (index !== undefined) consumerRows[index] = c
  }

  for (let index = 0; index < consumerCount; index++) {
    const consumer = model.consumerIds[index]
    const rows = rowsOf[index]
    const live = rows && ctx.liveOf(consumer, rows)
    const groupList = groupAllocations(model.consumerAllocations[index])
    if (groupList.length === 0) continue
    judgeConsumer(consumer, groupList, live, rows ?? NO_ROWS, consumerRows[index], instanceRows.nodeListOfConsumer[index])
  }

  /** Allocations per root (or sharing) provider; most consumers hold all of them on one provider. */
  function groupAllocations(allocs: Allocation[]): Group[] {
    const first = allocs[0]
    if (allocs.every((a) => a.resource_provider_id === first.resource_provider_id)) {
      const rp = model.providersById.get(first.resource_provider_id)
      if (!rp) return [] // placement's foreign key makes this impossible; nothing to judge against
      const sharing = ctx.isSharing(rp)
      const target = sharing ? rp : model.rootOf(rp)
      // The model's own array: groups are read, never modified, and findings copy the rows.
      return [{rp: target, sharing: sharing || ctx.isSharing(target), allocations: allocs}]
    }
    const groupList: Group[] = []
    for (const a of allocs) {
      const rp = model.providersById.get(a.resource_provider_id)
      if (!rp) continue // placement's foreign key makes this impossible; nothing to judge against
      const sharing = ctx.isSharing(rp)
      const target = sharing ? rp : model.rootOf(rp)
      // A consumer holds allocations on one or two providers: a list scan beats a Map per consumer.
      let g = groupList.find((x) => x.rp === target)
      if (!g) groupList.push((g = {rp: target, sharing: sharing || ctx.isSharing(target), allocations: []}))
      g.allocations.push(a)
    }
    return groupList
  }

  function judgeConsumer(
    consumer: string,
    groupList: Group[],
    live: Instance[] | undefined,
    rows: readonly Instance[],
    row: Consumer | undefined,
    ownList: readonly Instance[] | undefined,
  ): void {
    if (unavailable.length > 0) {
      const dark = darkCellsOf(consumer, groupList)
      if (dark.length > 0) {
        undecide(consumer, dark)
        return
      }
    }
    if (live && live.length > 0) {
      judgeInstanceConsumer(consumer, live, groupList, row, ownList)
      return
    }
    const migration = model.migrationsByUuid.get(consumer)
    if (migration && migration.deleted === 0) {
      judgeMigrationConsumer(consumer, migration, groupList, row)
      return
    }
    const deletedRows = rows.filter((i) => i.deleted !== 0)
    if (rows.length > 0 && deletedRows.length === rows.length) {
      for (const g of groupList) {
        emit(
          consumer,
          'allocation.consumer-deleted',
          'error',
          groupSubject(consumer, g, deletedRows[0].cell_uuid),
          `Instance ${consumer} is deleted in cell ${ctx.cellName(deletedRows[0].cell_uuid)} but still holds ${summarize(g.allocations, rc.name.bind(rc))} on ${g.rp.name ?? g.rp.uuid}.`,
          {
            allocations: allocRows(g.allocations),
            provider: providerRow(g.rp),
            consumer: consumerRow(row),
            instances: deletedRows.map(instanceRow),
          },
        )
      }
      return
    }
    if (rows.length > 0) return // only hidden copies (cross-cell resize bookkeeping): nova owns them
    if (ctx.buildRequestUuids.has(consumer)) return // being built: the scheduler claims before the cell row exists
    for (const g of groupList) {
      emit(
        consumer,
        'allocation.consumer-unknown',
        'error',
        groupSubject(consumer, g),
        `Consumer ${consumer} is neither an instance in any cell nor a migration, yet holds ${summarize(g.allocations, rc.name.bind(rc))} on ${g.rp.name ?? g.rp.uuid}.`,
        {
          allocations: allocRows(g.allocations),
          provider: providerRow(g.rp),
          consumer: consumerRow(row),
          instance_mapping: ctx.mappingOf(consumer) ?? null,
        },
      )
    }
  }

  // Reverse direction: live instances that should hold allocations and hold none.
  for (const [uuid, live] of unallocated) {
    const inst = live[0]
    if (inst.host === null || !holdsResources(inst)) continue
    const dark = ctx.unreadableHomesOf(uuid)
    if (dark.length > 0) {
      undecide(uuid, dark)
      continue
    }
    const expected = ctx.expected(inst)
    if (!expected.ok || Object.keys(expected.value.resources).length === 0) continue
    const cn = ctx.liveComputeNodeAt(inst.host, inst.node)
    const rp = cn && ctx.providerOf(cn)
    const subject: FindingSubject = cn ? ctx.nodeSubject(cn) : {cell: ctx.cellName(inst.cell_uuid), cell_uuid: inst.cell_uuid, host: inst.host}
    if (!cn && inst.node !== null) subject.node = inst.node
    if (rp) subject.provider_uuid = rp.uuid
    subject.instance_uuid = uuid
    subject.consumer_uuid = uuid
    flaggedInstances.add(uuid)
    emit(
      uuid,
      'allocation.missing',
      'error',
      subject,
      `Instance ${uuid} runs on ${inst.node ?? inst.host} but holds no allocation in placement: the scheduler will hand its resources to others.`,
      {
        instance: instanceRow(inst),
        expected: expected.value.resources,
        flavor: expected.value.flavorName,
        flavor_source: expected.value.flavorSource,
        boot_from_volume: expected.value.bootFromVolume,
        provider: rp ? providerRow(rp) : null,
        compute_node: cn ? {id: cn.id, uuid: cn.uuid, cell_uuid: cn.cell_uuid} : null,
      },
    )
  }

  for (const [cellUuid, consumers] of undecidedByCell) {
    const cell = model.cellOf(cellUuid)
    findings.push({
      check: 'leaks',
      code: 'allocation.undecided',
      severity: 'unknown',
      subject: {cell: cell?.name ?? cellUuid, cell_uuid: cellUuid},
      message: `Cell ${cell?.name ?? cellUuid} could not be read: ${consumers.length} consumer(s) that may live there are not judged (no leak, wrong provider or missing allocation is reported for them).`,
      evidence: {cell_error: cell?.error ?? null, undecided_consumers: consumers.length, sample: consumers.slice(0, 20)},
      repair: 'Make the cell database reachable and audit again.',
    })
  }
  for (const cell of unavailable) {
    if (undecidedByCell.has(cell.uuid)) continue
    findings.push(...ctx.undecided('leaks', 'allocation.undecided', 'missing allocations of its instances are').filter((f) => f.subject.cell_uuid === cell.uuid))
  }
  return {findings, flaggedConsumers, flaggedInstances, undecidedConsumers}

  /**
   * The outage rule: the unreadable cells a consumer's judgement depends on. The instance behind it
   * (a migration's instance for a migration consumer) must be mapped to a readable cell, and every
   * provider it holds allocations on must stand for a host of a readable cell.
   */
  function darkCellsOf(consumer: string, groups: Group[]): string[] {
    const migration = model.migrationsByUuid.get(consumer)
    const cells = new Set(ctx.unreadableHomesOf(migration?.instance_uuid ?? consumer))
    for (const g of groups) for (const c of ctx.unreadableCellsOfProvider(g.rp)) cells.add(c)
    return [...cells]
  }

  function undecide(consumer: string, cells: string[]): void {
    undecidedConsumers.add(consumer)
    for (const c of cells) push(undecidedByCell, c, consumer)
  }

  function judgeInstanceConsumer(consumer: string, live: Instance[], groups: Group[], row: Consumer | undefined, ownList: readonly Instance[] | undefined): void {
    const inst = live[0]
    const moving = ctx.inProgressByInstance.get(consumer) ?? NO_MIGRATIONS
    let aggs: Set<string> | undefined
    let allFine = true
    for (const g of groups) {
      if (g.sharing) {
        aggs ??= new Set(live.flatMap((i) => [...instanceAggregates(i)]))
        if (sharesWith(aggs, g.rp)) continue
        allFine = false
        emit(
          consumer,
          'allocation.wrong-provider',
          'error',
          groupSubject(consumer, g, inst.cell_uuid),
          `Instance ${consumer} holds ${summarize(g.allocations, rc.name.bind(rc))} on sharing provider ${g.rp.name ?? g.rp.uuid}, which shares no aggregate with its compute node ${inst.node ?? inst.host}.`,
          {
            allocations: allocRows(g.allocations),
            provider: providerRow(g.rp),
            sharing: true,
            provider_aggregates: [...model.aggregatesOf(g.rp.id)].sort(),
            instance_aggregates: [...aggs].sort(),
            instance: instanceRow(inst),
          },
        )
        continue
      }
      const cn = ctx.computeNodeOf(g.rp)
      if (cn ? livesOn(live, cn, ownList) : live.some((i) => standsForNodeOf(g.rp, i))) continue
      if (moving.some((m) => touches(m, cn, g.rp))) continue
      allFine = false
      const evacuation = (model.migrationsByInstance.get(consumer) ?? []).find(
        (m) =>
          m.deleted === 0 &&
          m.migration_type === 'evacuation' &&
          (m.status === 'done' || m.status === 'completed') &&
          (cn ? m.source_compute === cn.host && m.source_node === cn.hypervisor_hostname : m.source_node === g.rp.name) &&
          m.dest_compute === inst.host,
      )
      if (evacuation) {
        emit(
          consumer,
          'allocation.evacuation-leftover',
          'warning',
          {...groupSubject(consumer, g, inst.cell_uuid), ...(evacuation.uuid ? {migration_uuid: evacuation.uuid} : {})},
          `Instance ${consumer} was evacuated from ${evacuation.source_node ?? evacuation.source_compute} to ${inst.node ?? inst.host}; the source still holds ${summarize(g.allocations, rc.name.bind(rc))} (nova-compute frees it only when the source host restarts).`,
          {allocations: allocRows(g.allocations), provider: providerRow(g.rp), instance: instanceRow(inst), migration: migrationRow(evacuation)},
        )
        continue
      }
      emit(
        consumer,
        'allocation.wrong-provider',
        'error',
        groupSubject(consumer, g, inst.cell_uuid),
        `Instance ${consumer} lives on ${inst.node ?? inst.host} but holds ${summarize(g.allocations, rc.name.bind(rc))} on ${g.rp.name ?? g.rp.uuid}, with no migration in progress.`,
        {
          allocations: allocRows(g.allocations),
          provider: providerRow(g.rp),
          provider_compute_node: cn ? {id: cn.id, cell_uuid: cn.cell_uuid, host: cn.host, node: cn.hypervisor_hostname} : null,
          instance: instanceRow(inst),
          migrations: (model.migrationsByInstance.get(consumer) ?? []).map(migrationRow),
        },
      )
    }

    if (allFine) checkConsumerRow(consumer, groups, row, inst)
    if (!allFine || moving.length > 0 || inst.host === null || !holdsResources(inst) || live.length > 1) return
    const expected = ctx.expected(inst)
    if (!expected.ok) return
    if (holdsAsAsked(expected.value.resources, groups)) return
    const actual: ResourceAmounts = {}
    for (const g of groups) {
      for (const a of g.allocations) {
        const name = rc.name(a.resource_class_id)
        actual[name] = (actual[name] ?? 0) + a.used
      }
    }
    const want = expected.value.resources
    if (sameAmounts(want, actual)) return
    const classes = new Set([...Object.keys(want), ...CHECKED_CLASSES.filter((c) => c in actual)])
    const diff: Record<string, {expected: number; allocated: number}> = {}
    for (const c of classes) if ((want[c] ?? 0) !== (actual[c] ?? 0)) diff[c] = {expected: want[c] ?? 0, allocated: actual[c] ?? 0}
    if (Object.keys(diff).length === 0) return
    // Before cpu_dedicated_set, pinned guests allocated VCPU: still right on hosts without PCPU inventory.
    const nodeGroup = groups.find((g) => !g.sharing)
    const pcpuId = rc.id('PCPU') as number
    if (
      Object.keys(diff).every((c) => c === 'VCPU' || c === 'PCPU') &&
      want.PCPU !== undefined &&
      !actual.PCPU &&
      nodeGroup !== undefined &&
      model.inventory(nodeGroup.rp.id, pcpuId) === undefined &&
      (actual.VCPU === want.PCPU + (want.VCPU ?? 0) || actual.VCPU === want.PCPU + (want.VCPU ?? 0) - 1)
    )
      return
    flaggedInstances.add(consumer)
    const g = nodeGroup ?? groups[0]
    const subject = groupSubject(consumer, g, inst.cell_uuid)
    subject.instance_uuid = consumer
    emit(
      consumer,
      'allocation.amount-mismatch',
      'warning',
      subject,
      `Instance ${consumer} holds ${fmtAmounts(actual)} but its flavor ${expected.value.flavorName ?? ''} asks for ${fmtAmounts(want)}.`,
      {
        differences: diff,
        expected: want,
        allocated: actual,
        flavor: expected.value.flavorName,
        flavor_source: expected.value.flavorSource,
        cpu_policy: expected.value.cpuPolicy,
        boot_from_volume: expected.value.bootFromVolume,
        allocations: groups.flatMap((x) => allocRows(x.allocations)),
        providers: groups.map((x) => providerRow(x.rp)),
        consumer: consumerRow(row),
        instance: instanceRow(inst),
      },
    )
  }

  function judgeMigrationConsumer(consumer: string, m: Migration, groups: Group[], row: Consumer | undefined): void {
    const inProgress = isMigrationInProgress(m)
    let allFine = true
    for (const g of groups) {
      if (inProgress && (g.sharing || touches(m, ctx.computeNodeOf(g.rp), g.rp))) continue
      allFine = false
      if (inProgress) {
        emit(
          consumer,
          'allocation.wrong-provider',
          'error',
          groupSubject(consumer, g, m.cell_uuid),
          `Migration ${consumer} (${m.migration_type ?? 'migration'} ${m.status}) holds ${summarize(g.allocations, rc.name.bind(rc))} on ${g.rp.name ?? g.rp.uuid}, which is neither its source nor its destination.`,
          {allocations: allocRows(g.allocations), provider: providerRow(g.rp), migration: migrationRow(m)},
        )
        continue
      }
      const subject = groupSubject(consumer, g, m.cell_uuid)
      subject.migration_uuid = consumer
      if (m.instance_uuid) subject.instance_uuid = m.instance_uuid
      emit(
        consumer,
        'allocation.migration-finished',
        'error',
        subject,
        `Migration ${consumer} is ${m.status} but still holds ${summarize(g.allocations, rc.name.bind(rc))} on ${g.rp.name ?? g.rp.uuid}.`,
        {allocations: allocRows(g.allocations), provider: providerRow(g.rp), consumer: consumerRow(row), migration: migrationRow(m)},
      )
    }
    if (allFine) checkConsumerRow(consumer, groups, row)
  }

  function checkConsumerRow(consumer: string, groups: Group[], c: Consumer | undefined, inst?: Instance): void {
    const project = c ? model.projectsById.get(c.project_id) : undefined
    const user = c ? model.usersById.get(c.user_id) : undefined
    let problem: string | undefined
    if (!c) problem = 'has no row in placement.consumers'
    else if (project === undefined || project === INCOMPLETE_CONSUMER_ID) problem = 'has no project (incomplete consumer)'
    else if (user === undefined || user === INCOMPLETE_CONSUMER_ID) problem = 'has no user (incomplete consumer)'
    if (!problem) return
    const g = groups.find((x) => !x.sharing) ?? groups[0]
    const subject = groupSubject(consumer, g, inst?.cell_uuid)
    if (inst) subject.instance_uuid = consumer
    emit(consumer, 'allocation.consumer-incomplete', 'warning', subject, `Consumer ${consumer} ${problem}: quota usage and heal_allocations miss it.`, {
      consumer: c ? {id: c.id, uuid: c.uuid, generation: c.generation, project_id: c.project_id, user_id: c.user_id, project: project ?? null, user: user ?? null} : null,
      expected_project: inst?.project_id ?? null,
      expected_user: inst?.user_id ?? null,
      allocations: groups.flatMap((x) => allocRows(x.allocations)),
    })
  }
}

/** The diff below is empty: every asked class allocated as asked, no other checked class allocated. */
function sameAmounts(want: ResourceAmounts, actual: ResourceAmounts): boolean {
  for (const c in want) if (want[c] !== (actual[c] ?? 0)) return false
  for (const c of CHECKED_CLASSES) if (!(c in want) && (actual[c] ?? 0) !== 0) return false
  return true
}

function summarize(allocs: Allocation[], name: (id: number) => string): string {
  return allocs.map((a) => `${name(a.resource_class_id)}=${a.used}`).join(', ')
}

function fmtAmounts(r: ResourceAmounts): string {
  const keys = Object.keys(r).sort()
  return keys.length === 0 ? 'nothing' : keys.map((k) => `${k}=${r[k]}`).join(', ')
}
