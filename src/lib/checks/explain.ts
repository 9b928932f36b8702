/**
 * What each finding code means beyond its one-line summary: how nova gets there and what the repair
 * does. Read from the units (registry.ts), as FINDING_CODES is, so `cloudctl explain` and the
 * registry cannot drift apart; a test holds docs/checks.md to the same list.
 */
import type {CheckName, Severity} from '../domain/finding.js'
import {FINDING_CODES} from './index.js'
import {UNITS} from './registry.js'
import type {CodeExplanation} from './unit.js'

export type {CodeExplanation} from './unit.js'

export const CODE_EXPLANATIONS: Record<string, CodeExplanation> = Object.fromEntries(UNITS.map((u) => [u.code, u.explain]))

export interface ExplainedCode extends CodeExplanation {
  code: string
  check: CheckName
  severity: Severity | 'info|warning'
  summary: string
  docs: string
}

export function explainCode(code: string): ExplainedCode | undefined {
  const base = FINDING_CODES[code]
  const ex = CODE_EXPLANATIONS[code]
  if (!base || !ex) return undefined
  return {code, check: base.check, severity: base.severity, summary: base.summary, ...ex, docs: `docs/checks.md#${base.check}`}
}
