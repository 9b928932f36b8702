/**
 * How much of a resource an inventory offers, the way placement (8, Zed) computes it:
 *
 *     capacity = (total - reserved) * allocation_ratio
 *
 * allocation_ratio is a MySQL FLOAT (single precision), and placement meets it in two forms:
 * - in SQL (the candidate search, research_context's capacity clause) MySQL widens the stored
 *   single to a double: 0.9 is 0.8999999761581421 there, so an exact fit at 0.9 is refused;
 * - in Python (provider summaries, the claim in allocation.py) it is the value the client read back
 *   over the text protocol, where MariaDB prints a FLOAT with 6 significant digits, halves to even
 *   (0.9 reads 0.9; 0.123456789 reads 0.123457; 7115.625 reads 7115.62).
 * Snapshots hold the widened double (capture selects `col + 0e0`), so both forms derive from it.
 */

/** The trait that makes a provider share its inventory with the members of its aggregates. */
export const SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'

export interface InventoryAmounts {
  total: number
  reserved: number
  allocation_ratio: number
}

/** What a FLOAT column holds, widened to double as MySQL's arithmetic (and `col + 0e0`) does. */
export function floatStored(v: number): number {
  return Math.fround(v)
}

// A cloud has a handful of allocation ratios and asks for them per inventory and per request.
const readBack = new Map<number, number>()

/** What a client reads back for a FLOAT column: 6 significant digits, ties to even. */
export function floatRead(v: number): number {
  let r = readBack.get(v)
  if (r === undefined) {
    r = floatReadOf(v)
    if (readBack.size < 4096) readBack.set(v, r)
  }
  return r
}

function floatReadOf(v: number): number {
  const f = Math.fround(v)
  const seven = f.toPrecision(7)
  // toPrecision rounds ties away from zero; a tie is a value exact at 7 digits whose 7th is a 5.
  const m = /^(-?)(\d*)\.?(\d*)(e[+-]\d+)?$/.exec(seven)
  if (m !== null && Number(seven) === f) {
    const digits = m[2] + m[3]
    const sixth = Number(digits[digits.length - 2])
    if (digits.endsWith('5') && sixth % 2 === 0) return Number(seven.replace(/5(e[+-]\d+)?$/, '0$1'))
  }
  return Number(f.toPrecision(6))
}

/** Placement's capacity in Python (claims, provider summaries before `int()`). */
export function capacityOf(inv: InventoryAmounts): number {
  return (inv.total - inv.reserved) * floatRead(inv.allocation_ratio)
}

/** Placement's capacity in SQL (the candidate search): a double, not rounded. */
export function sqlCapacityOf(inv: InventoryAmounts): number {
  return (inv.total - inv.reserved) * floatStored(inv.allocation_ratio)
}

/** The capacity a provider summary reports: `int()` of the Python capacity. */
export function summaryCapacityOf(inv: InventoryAmounts): number {
  return Math.trunc(capacityOf(inv))
}
