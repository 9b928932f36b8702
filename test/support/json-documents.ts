/**
 * Every command's machine-readable document on the bundled demo (examples/demo-cloud.yaml), with the
 * variants that change its shape (a refusal, NoValidHost, a scenario, a mix, --explain): what
 * test/output/json-schema.e2e.test.ts validates against docs/json-schema/, and what
 * scripts/json-schemas.ts drafts those schemas from.
 *
 * `schema` is the command id (`audit all` → audit-all), or `error` for the error document.
 */
import {join} from 'node:path'

import {ROOT} from './cli.js'

export const DEMO = join(ROOT, 'examples/demo-cloud.yaml')
/** Demo instances with a recorded request spec: on cmp-r1-01 (cell1). */
export const DEMO_INSTANCE = '92603ad8-6fc4-46da-9e14-7a8b7fb99abd'
const UNKNOWN = '00000000-0000-4000-8000-00000000dead'

export interface JsonCase {
  schema: string
  args: string[]
}

const s = ['-s', DEMO]
const c = (schema: string, ...args: string[]): JsonCase => ({schema, args})

export const JSON_CASES: JsonCase[] = [
  ...['all', 'aggregates', 'cells', 'leaks', 'pinning', 'providers', 'usage'].map((x) => c(`audit-${x}`, 'audit', x, ...s)),
  c('audit-all', 'audit', 'all', ...s, '--check', 'usage'),
  c('error', 'audit', 'all', ...s, '--host', 'no-such-host'),
  c('cells-list', 'cells', 'list', ...s),
  c('cells-discover-hosts', 'cells', 'discover-hosts', ...s),
  c('cells-discover-hosts', 'cells', 'discover-hosts', ...s, '--prune'),
  c('cells-map-instances', 'cells', 'map-instances', ...s),
  c('cells-verify-instance', 'cells', 'verify-instance', DEMO_INSTANCE, ...s),
  c('cells-verify-instance', 'cells', 'verify-instance', UNKNOWN, ...s),
  c('explain', 'explain', 'allocation.consumer-deleted'),
  c('explain', 'explain'),
  c('error', 'explain', 'no.such-code'),
  c('hosts-list', 'hosts', 'list', ...s),
  ...['aggregates', 'leaks', 'pinning', 'providers', 'usage'].map((x) => c(`repair-${x}`, 'repair', x, ...s)),
  c('repair-aggregates', 'repair', 'aggregates', ...s, '--prune'),
  c('repair-pinning', 'repair', 'pinning', ...s, '--force'),
  c('repair-providers', 'repair', 'providers', ...s, '--strategy', 'move'),
  c('error', 'repair', 'leaks', ...s, '--apply'),
  c('error', 'repair', 'undo', join(ROOT, 'no-such-undo-file.json'), ...s),
  c('simulate-boot', 'simulate', 'boot', ...s, '--flavor', 'm1.small'),
  c('simulate-boot', 'simulate', 'boot', ...s, '--flavor', 'm1.xlarge', '--num-instances', '300', '--explain'),
  c('simulate-boot', 'simulate', 'boot', ...s, '--instance', DEMO_INSTANCE, '--why', 'cmp-r1-01'),
  c(
    'simulate-boot',
    'simulate',
    'boot',
    ...s,
    '--flavor',
    'm1.small',
    '--disable-host',
    'cmp-r1-01',
    '--drain',
    'cmp-r1-02',
    '--apply-repairs',
    '--add-hosts',
    '2',
    '--like',
    'cmp-r2-01',
  ),
  c('error', 'simulate', 'boot', ...s, '--flavor', 'no-such-flavor'),
  c('simulate-capacity', 'simulate', 'capacity', ...s),
  c('simulate-capacity', 'simulate', 'capacity', ...s, '--mix', 'm1.small=50%,m1.large=50%', '--drain', 'cmp-r1-01', '--per-host'),
  c('simulate-capacity', 'simulate', 'capacity', ...s, '--availability-zone', 'az1', '--apply-repairs', '--set-allocation-ratio', 'VCPU=4.0'),
  c('simulate-migrate', 'simulate', 'migrate', ...s, '--instance', DEMO_INSTANCE),
  c('simulate-migrate', 'simulate', 'migrate', ...s, '--instance', DEMO_INSTANCE, '--live', '--explain'),
  c('simulate-migrate', 'simulate', 'migrate', ...s, '--instance', DEMO_INSTANCE, '--host', 'cmp-r2-01'),
  c('error', 'simulate', 'migrate', ...s, '--instance', DEMO_INSTANCE, '--host', 'cmp-r1-04'),
  c('error', 'simulate', 'migrate', ...s, '--instance', DEMO_INSTANCE, '--host', 'cmp-r1-01'),
  c('snapshot-diff', 'snapshot', 'diff', DEMO, DEMO),
  c('snapshot-show', 'snapshot', 'show', ...s),
  c('snapshot-validate', 'snapshot', 'validate', DEMO),
  c('error', 'snapshot', 'validate', join(ROOT, 'no-such-snapshot.yaml')),
  c('version', 'version'),
]
