/**
 * Drafts docs/json-schema/<command>.schema.json from the documents the built CLI prints on the demo
 * (test/support/json-documents.ts): the fields every sample has are required, objects are closed
 * (additionalProperties: false), and the positions whose keys are data (a map keyed by host, code,
 * resource class, ...) are open maps. The drafts are then read and completed by hand (descriptions);
 * test/output/json-schema.e2e.test.ts holds the CLI to them.
 *
 *   npm run build && npx tsx scripts/json-schemas.ts [command-id ...]   (writes only missing files, or the ones named)
 */
import {existsSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {cloudctl, ROOT} from '../test/support/cli.js'
import {JSON_CASES} from '../test/support/json-documents.js'

type Schema = Record<string, unknown>

/** Maps: keys are data. Same list as DATA_POSITIONS of src/lib/output/json-view.ts, plus the documents' own. */
const MAPS = new Set([
  'counts.by_check',
  'counts.by_code',
  'counts.changes',
  'counts.by_severity',
  'request.extra_specs',
  'request.image_properties',
  'recorded_request.flavor.extra_specs',
  'recorded_request.image.properties',
  'recorded_request.scheduler_hints',
  'flavors[].resources',
  'zones[].resources',
  'mix.by_az[].by_flavor',
  'scenario.repairs.freed',
  'host_usage[].resources',
  'scenario.repairs.freed_by_provider[].resources',
  'plan.db_labels',
  'plan.steps[].set',
  'plan.steps[].where',
  'plan.steps[].before',
  'plan.steps[].after',
  'plan.steps[].row',
  'totals',
])
/** Opaque: anything (evidence is per finding code; docs/checks.md describes it). */
const OPAQUE = new Set(['findings[].evidence', 'plan.steps[].params'])

/** A finding's record of the evidence rows the output cut (src/lib/output/evidence.ts). */
const EVIDENCE_TRUNCATED: Schema = {
  type: 'object',
  description:
    'Present only when evidence was cut (the default; --full-evidence prints every row): for each array of the evidence longer than 20 rows, its JSON Pointer (RFC 6901) into evidence, e.g. "/blocking_allocations", and how many of its rows are shown and how many the check found (docs/json.md "Evidence").',
  additionalProperties: {
    type: 'object',
    properties: {shown: {type: 'integer', minimum: 0}, total: {type: 'integer', minimum: 0}},
    required: ['shown', 'total'],
    additionalProperties: false,
  },
}

function typeOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (Number.isInteger(v)) return 'integer'
  return typeof v
}

function infer(samples: unknown[], path: string): Schema {
  const strip = path.replace(/^simulation\./, '')
  // A finding's evidence, wherever a document carries findings (audit, snapshot diff), is opaque.
  if (OPAQUE.has(strip) || strip.endsWith('.evidence') || samples.length === 0) return {}
  const types = new Set(samples.map(typeOf))
  if (types.has('integer') && types.has('number')) types.delete('integer')
  const out: Schema = {type: types.size === 1 ? [...types][0] : [...types].sort()}
  const objs = samples.filter((v): v is Record<string, unknown> => typeOf(v) === 'object')
  if (objs.length > 0) {
    if (MAPS.has(strip)) {
      out.additionalProperties = infer(
        objs.flatMap((o) => Object.values(o)),
        `${path}{}`,
      )
    } else {
      const keys = [...new Set(objs.flatMap((o) => Object.keys(o)))]
      out.properties = Object.fromEntries(
        keys.map((k) => [
          k,
          infer(
            objs.filter((o) => k in o).map((o) => o[k]),
            path === '' ? k : `${path}.${k}`,
          ),
        ]),
      )
      // A finding: evidence_truncated shows only where evidence was cut, which the demo never needs.
      if (keys.includes('evidence') && !keys.includes('evidence_truncated')) (out.properties as Record<string, Schema>).evidence_truncated = EVIDENCE_TRUNCATED
      const required = keys.filter((k) => objs.every((o) => k in o))
      if (required.length > 0) out.required = required
      out.additionalProperties = false
    }
  }
  const arrays = samples.filter((v): v is unknown[] => Array.isArray(v))
  if (arrays.length > 0) {
    const items = arrays.flat()
    if (items.length > 0) out.items = infer(items, `${path}[]`)
  }
  return out
}

const EXIT = {type: 'integer', enum: [0, 1, 2, 3, 4, 5, 6], description: 'The exit status the command ends with (README "Exit codes").'}
const WARN = {type: 'array', items: {type: 'string'}, description: 'What the operator should know about this result; [] when nothing.'}

/** What the samples cannot tell: the fields every document has, and values the demo never shows. */
function finish(name: string, s: Schema): void {
  const props = s.properties as Record<string, Schema>
  if (name === 'error') {
    ;(props.error.properties as Record<string, Schema>).exit_code = EXIT
    s.description = 'Every command, in -f json or -f yaml, when it fails: this document on stdout instead of its result.'
    return
  }
  props.exit_code = EXIT
  props.warnings = WARN
  s.required = ['exit_code', 'warnings', ...((s.required as string[] | undefined) ?? []).filter((k) => k !== 'exit_code' && k !== 'warnings')]
  if (props.applied)
    props.applied = {type: ['object', 'null'], description: 'With --apply: what was written and verified (docs/repairs.md); null on a dry run.'}
  if (props.release) props.release = {type: ['string', 'null'], description: 'The release the databases were captured from (null: not recorded).'}
}

const only = process.argv.slice(2)
const bySchema = new Map<string, unknown[]>()
for (const c of JSON_CASES) {
  const r = await cloudctl([...c.args, '--json'])
  bySchema.set(c.schema, [...(bySchema.get(c.schema) ?? []), JSON.parse(r.stdout)])
}
for (const [name, docs] of bySchema) {
  const file = join(ROOT, 'docs/json-schema', `${name}.schema.json`)
  if (only.length > 0 ? !only.includes(name) : existsSync(file)) continue
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: `https://cloudctl.invalid/json-schema/${name}.schema.json`,
    title: `cloudctl ${name.replace('-', ' ')} --json`,
    ...infer(docs, ''),
  }
  finish(name, schema)
  writeFileSync(file, `${JSON.stringify(schema, null, 2)}\n`)
  console.log(`wrote ${file} (${docs.length} sample(s))`)
}
