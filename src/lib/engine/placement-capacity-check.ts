/**
 * Placement's capacity rules on one inventory, in the two places they differ (see placement.ts):
 * the candidate search's SQL bound, and the claim's Python bound. The formulas and the two readings
 * of the FLOAT ratio live in domain/placement-capacity.ts.
 */
import {capacityOf, floatRead, floatStored, sqlCapacityOf, summaryCapacityOf} from '../domain/placement-capacity.js'
import type {Inventory} from '../domain/snapshot.js'

export interface ProviderInventory {
  rcId: number
  total: number
  reserved: number
  minUnit: number
  maxUnit: number
  stepSize: number
  ratio: number
  /** (total - reserved) * float32(ratio): the SQL bound (a double, not rounded). */
  sqlCapacity: number
  /** (total - reserved) * text(ratio): the Python bound used by claims. */
  pyCapacity: number
  /** int(pyCapacity): provider summary capacity. */
  summaryCapacity: number
  /** The ratio as a client reads the FLOAT back (0.9), computed once: messages use it. */
  ratioText: number
}

export function inventoryOf(inv: Inventory): ProviderInventory {
  return {
    rcId: inv.resource_class_id,
    total: inv.total,
    reserved: inv.reserved,
    minUnit: inv.min_unit,
    maxUnit: inv.max_unit,
    stepSize: inv.step_size,
    ratio: inv.allocation_ratio,
    sqlCapacity: sqlCapacityOf(inv),
    pyCapacity: capacityOf(inv),
    summaryCapacity: summaryCapacityOf(inv),
    ratioText: floatRead(inv.allocation_ratio),
  }
}

export type CapacityVerdict = {ok: true} | {ok: false; why: 'no_inventory' | 'capacity' | 'min_unit' | 'max_unit' | 'step_size'; detail: string}

/** The candidate-search rule (SQL): why a provider cannot give `amount`, or ok. */
const FITS: CapacityVerdict = {ok: true}

/**
 * research_context._capacity_check_clause: the SQL capacity bound and the unit constraints. The one
 * spelling of the test: the candidate scan's hot loop calls it, checkCandidateCapacity explains a no.
 */
export function candidateFits(inv: ProviderInventory, used: number, amount: number): boolean {
  return used + amount <= inv.sqlCapacity && inv.minUnit <= amount && inv.maxUnit >= amount && inv.stepSize > 0 && amount % inv.stepSize === 0
}

export function checkCandidateCapacity(inv: ProviderInventory | undefined, used: number, amount: number, rc: string): CapacityVerdict {
  if (inv && candidateFits(inv, used, amount)) return FITS
  if (!inv) return {ok: false, why: 'no_inventory', detail: `no ${rc} inventory`}
  if (!(used + amount <= inv.sqlCapacity)) {
    return {ok: false, why: 'capacity', detail: capacityDetail(inv, used, amount, rc)}
  }
  if (inv.minUnit > amount) return {ok: false, why: 'min_unit', detail: `${rc} ${amount} is below min_unit ${inv.minUnit}`}
  if (inv.maxUnit < amount) return {ok: false, why: 'max_unit', detail: `${rc} ${amount} exceeds max_unit ${inv.maxUnit}`}
  if (inv.stepSize <= 0 || amount % inv.stepSize !== 0)
    return {ok: false, why: 'step_size', detail: `${rc} ${amount} is not a multiple of step_size ${inv.stepSize}`}
  return FITS
}

/** The claim rule (PUT /allocations): constraints first, then Python capacity. */
export function checkClaimCapacity(inv: ProviderInventory | undefined, used: number, amount: number): boolean {
  if (!inv) return false
  if (amount === 0) return true
  if (amount < inv.minUnit || amount > inv.maxUnit || inv.stepSize <= 0 || amount % inv.stepSize !== 0) return false
  return used + amount <= inv.pyCapacity
}

function capacityDetail(inv: ProviderInventory, used: number, amount: number, rc: string): string {
  return `insufficient ${rc}: need ${amount}, used ${used} of ${fmtCap(inv.sqlCapacity)} ((${inv.total} - ${inv.reserved}) x ${fmtRatio(inv.ratio)})`
}

function fmtCap(c: number): string {
  return Number.isInteger(c) ? String(c) : c.toFixed(6).replace(/0+$/, '')
}
function fmtRatio(r: number): string {
  const f = floatStored(r)
  return f === floatRead(r) ? String(floatRead(r)) : `${floatRead(r)} (float ${f})`
}
