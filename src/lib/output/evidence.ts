/**
 * Evidence sized for people. A check puts every row it saw in a finding's evidence (a stale provider
 * of a 2,000-host cloud carried every allocation on it: 31 MB of JSON for one audit), and the repair
 * planners read those rows, so the checks keep them whole. What is printed is cut here, in the output
 * layer, and only here: every array in the evidence, at any depth, keeps its first EVIDENCE_ROWS
 * elements, and the finding says how many there were (`--full-evidence` prints everything).
 *
 * The JSON shape (docs/json.md "Evidence"): a finding with a cut array gains
 * `evidence_truncated: {"<JSON Pointer into evidence>": {"shown": 20, "total": 2000}}`. A finding
 * with nothing cut is printed exactly as the check made it, without that field.
 */

/** Rows of one evidence array an operator reads; the rest are counted. */
export const EVIDENCE_ROWS = 20

export interface Truncation {
  shown: number
  total: number
}

/** JSON Pointer (RFC 6901) -> what was kept of the array there. */
export type Truncations = Record<string, Truncation>

const pointerToken = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * `value` with every array longer than `limit` cut to its first `limit` elements, recording each cut
 * under its JSON Pointer. Copy on write: what holds no long array is returned as it is (the same
 * object), so the common finding costs a walk and no allocation, and the check's evidence is never
 * modified (the planners may hold the same objects).
 */
function cap(value: unknown, limit: number, pointer: string, cuts: Truncations): unknown {
  if (Array.isArray(value)) {
    const kept = value.length > limit ? value.slice(0, limit) : value
    if (kept !== value) cuts[pointer] = {shown: limit, total: value.length}
    let out: unknown[] | undefined = kept === value ? undefined : kept
    for (let i = 0; i < kept.length; i++) {
      const v = kept[i]
      if (typeof v !== 'object' || v === null) continue
      const c = cap(v, limit, `${pointer}/${i}`, cuts)
      if (c !== v) {
        out ??= kept.slice()
        out[i] = c
      }
    }
    return out ?? value
  }
  if (typeof value !== 'object' || value === null) return value
  let out: Record<string, unknown> | undefined
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'object' || v === null) continue
    const c = cap(v, limit, `${pointer}/${pointerToken(k)}`, cuts)
    if (c !== v) {
      out ??= {...(value as Record<string, unknown>)}
      out[k] = c
    }
  }
  return out ?? value
}

/** A finding's evidence cut to `limit` rows per array, and what was cut (undefined: nothing). */
export function capEvidence<E>(evidence: E, limit: number = EVIDENCE_ROWS): {evidence: E; truncated?: Truncations} {
  const cuts: Truncations = {}
  const capped = cap(evidence, limit, '', cuts) as E
  return capped === evidence ? {evidence} : {evidence: capped, truncated: cuts}
}

/**
 * A finding as printed: the same object when nothing is cut, else a copy with its evidence cut and
 * `evidence_truncated` after the finding's own fields. `limit` null: --full-evidence.
 */
export function capFinding<F extends {evidence: unknown}>(finding: F, limit: number | null = EVIDENCE_ROWS): F | (F & {evidence_truncated: Truncations}) {
  if (limit === null) return finding
  const {evidence, truncated} = capEvidence(finding.evidence, limit)
  return truncated === undefined ? finding : {...finding, evidence, evidence_truncated: truncated}
}

/** "… and N more" lines for people, one per cut array ("blocking_allocations: … and 1980 more"). */
export function truncationLines(truncated: Truncations | undefined): string[] {
  if (!truncated) return []
  return Object.entries(truncated).map(
    ([pointer, t]) =>
      `${pointer.slice(1).replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~')}: … and ${t.total - t.shown} more (${t.total} in all; --full-evidence shows every row)`,
  )
}
