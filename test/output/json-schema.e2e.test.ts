/**
 * Every command's machine-readable document has a JSON Schema under docs/json-schema/ and keeps to it
 * (built CLI, bundled demo): `exit_code` and `warnings` on top of every result, snake_case field
 * names everywhere but in maps whose keys are data (hosts, codes, resource classes, ...), and
 * the error document on failures.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {Ajv2020} from 'ajv/dist/2020.js'
import {describe, expect, it} from 'vitest'
import {parse as parseYaml} from 'yaml'

import {cloudctl, ROOT} from '../support/cli.js'
import {DEMO, JSON_CASES} from '../support/json-documents.js'

const DIR = join(ROOT, 'docs/json-schema')
const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/
/** A repair plan's value expressions (`{"$now": true}`, `{"$col": ...}`, docs/repairs.md) are not fields. */
const FIELD = (name: string) => SNAKE.test(name) || /^\$[a-z]+$/.test(name)
type Schema = Record<string, unknown>

const schemas = new Map(
  readdirSync(DIR)
    .filter((f) => f.endsWith('.schema.json'))
    .map((f) => [f.replace(/\.schema\.json$/, ''), JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Schema]),
)
const ajv = new Ajv2020({allErrors: true, strict: true, allowUnionTypes: true})
const validators = new Map([...schemas].map(([name, s]) => [name, ajv.compile(s)]))

/** Command ids of the built CLI (oclif.manifest.json), plugins' (help, autocomplete) aside. */
function commandIds(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, unknown>}
  return Object.keys(manifest.commands).map((id) => id.replaceAll(':', '-'))
}

/** Every field name a schema declares (`properties`), with where: maps (additionalProperties only) declare none. */
function declaredNames(s: unknown, path: string, out: Array<{path: string; name: string; closed: boolean}>): void {
  if (Array.isArray(s)) {
    for (const x of s) declaredNames(x, path, out)
    return
  }
  if (typeof s !== 'object' || s === null) return
  const o = s as Schema
  if (o.properties && typeof o.properties === 'object') {
    for (const [name, sub] of Object.entries(o.properties)) {
      out.push({path, name, closed: o.additionalProperties === false})
      declaredNames(sub, `${path}.${name}`, out)
    }
  }
  for (const k of ['items', 'additionalProperties', 'anyOf', 'oneOf'])
    if (k in o) declaredNames(o[k], `${path}${k === 'items' ? '[]' : k === 'additionalProperties' ? '{}' : ''}`, out)
}

describe('JSON documents and their schemas (docs/json-schema)', () => {
  it('every command has a schema, and every schema is of a command (or the error document)', () => {
    const ids = commandIds()
    expect(ids.length).toBeGreaterThan(20)
    expect(
      ids.filter((id) => !schemas.has(id)),
      'commands without docs/json-schema/<id>.schema.json',
    ).toEqual([])
    expect(
      [...schemas.keys()].filter((n) => n !== 'error' && !ids.includes(n)),
      'schemas of no command',
    ).toEqual([])
  })

  it('schemas name fields in snake_case only, and every object with named fields is closed', () => {
    for (const [name, s] of schemas) {
      const names: Array<{path: string; name: string; closed: boolean}> = []
      declaredNames(s, name, names)
      expect(
        names.filter((n) => !FIELD(n.name)).map((n) => `${n.path}.${n.name}`),
        `${name}: camelCase or other non-snake field names`,
      ).toEqual([])
      expect([...new Set(names.filter((n) => !n.closed).map((n) => n.path))], `${name}: objects that accept undeclared fields`).toEqual([])
      if (name !== 'error') expect((s.required as string[]).slice(0, 2)).toEqual(['exit_code', 'warnings'])
    }
  })

  it.each(JSON_CASES.map((c) => ({...c, file: `${c.schema}.schema.json`, name: c.args.map((a) => a.replace(`${ROOT}/`, '')).join(' ')})))(
    '$name --json follows $file',
    async ({schema, args}) => {
      const r = await cloudctl([...args, '--json'])
      const doc = JSON.parse(r.stdout) as {exit_code?: number; error?: {exit_code: number}}
      const validate = validators.get(schema)
      expect(validate, `no docs/json-schema/${schema}.schema.json`).toBeDefined()
      const ok = validate!(doc)
      expect(ok ? [] : validate!.errors, `${schema}: schema violations`).toEqual([])
      // The document says how the process ends, success or not.
      expect(schema === 'error' ? doc.error?.exit_code : doc.exit_code).toBe(r.exitCode)
      if (schema === 'error') expect(r.exitCode).not.toBe(0)
    },
  )

  it('yaml prints the same document as json, and csv heads its columns in snake_case', async () => {
    const args = ['simulate', 'boot', '-s', DEMO, '--flavor', 'm1.small']
    const [json, yaml, csv] = await Promise.all([
      cloudctl([...args, '-f', 'json']),
      cloudctl([...args, '-f', 'yaml']),
      cloudctl(['simulate', 'capacity', '-s', DEMO, '-f', 'csv', '-c', 'flavor,by_az,resources.VCPU']),
    ])
    expect(parseYaml(yaml.stdout)).toEqual(JSON.parse(json.stdout))
    const header = csv.stdout
      .split('\n')[0]
      .split(',')
      .map((c) => c.replace(/"/g, ''))
    expect(header).toEqual(['flavor', 'by_az', 'resources.VCPU'])
    // `resources.VCPU`: a field, then (after the dot) a key that is data.
    expect(header.map((c) => c.split('.')[0]).filter((c) => !SNAKE.test(c))).toEqual([])
  })
})
