/**
 * What the allocation walk (classify.ts) concludes, per consumer and provider group, before any
 * finding is worded: each leak code's unit turns its verdicts into findings.
 */
import type {Consumer, ComputeNode, Instance, Migration, ResourceProvider} from '../../domain/snapshot.js'
import type {ExpectedResult} from '../flavor-resources.js'
import type {Group} from './shared.js'

export type ExpectedValue = Extract<ExpectedResult, {ok: true}>['value']

export type WrongProvider =
  /** An instance holds a sharing provider that shares no aggregate with its node(s). */
  | {kind: 'sharing'; consumer: string; g: Group; inst: Instance; aggs: Set<string>}
  /** An instance holds a provider that is not its node's, with no migration to explain it. */
  | {kind: 'instance'; consumer: string; g: Group; inst: Instance; cn: ComputeNode | undefined}
  /** A migration in progress holds a provider that is neither its source nor its destination. */
  | {kind: 'migration'; consumer: string; g: Group; m: Migration}

export interface AmountMismatch {
  consumer: string
  inst: Instance
  groups: Group[]
  row: Consumer | undefined
  expected: ExpectedValue
  actual: Record<string, number>
  diff: Record<string, {expected: number; allocated: number}>
}

export interface LeakVerdicts {
  deleted: Array<{consumer: string; g: Group; deletedRows: Instance[]; row: Consumer | undefined}>
  unknown: Array<{consumer: string; g: Group; row: Consumer | undefined}>
  finished: Array<{consumer: string; g: Group; m: Migration; row: Consumer | undefined}>
  wrongProvider: WrongProvider[]
  evacuation: Array<{consumer: string; g: Group; inst: Instance; evacuation: Migration}>
  missing: Array<{uuid: string; inst: Instance; expected: ExpectedValue; cn: ComputeNode | undefined; rp: ResourceProvider | undefined}>
  amounts: AmountMismatch[]
  incomplete: Array<{consumer: string; groups: Group[]; row: Consumer | undefined; inst?: Instance; problem: string}>
  /** Per unreadable cell, the consumers judged undecided because of it. */
  undecidedByCell: Map<string, string[]>
}

export interface LeakClassification {
  verdicts: LeakVerdicts
  /** Consumers with at least one allocation finding. */
  flaggedConsumers: Set<string>
  /** Instances with an allocation.missing / amount-mismatch finding. */
  flaggedInstances: Set<string>
  /** Consumers that could not be decided because a cell is unavailable. */
  undecidedConsumers: Set<string>
}
