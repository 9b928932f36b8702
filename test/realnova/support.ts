/**
 * Clouds that real nova wrote (see README.md): factory.py plays a scenario in nova's own functional
 * harness (cached), clones real nova-manage / placement-manage schemas and loads every row.
 */
import {randomBytes} from 'node:crypto'
import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import {execa} from 'execa'

const HERE = fileURLToPath(new URL('.', import.meta.url))
const PYTHON = '/usr/bin/python3'

/** What the factory needs on this machine; empty when everything is there. */
export function missingNova(): string[] {
  const need = [
    '/usr/bin/nova-manage',
    '/usr/bin/placement-manage',
    '/usr/lib/python3/dist-packages/nova/tests/functional/libvirt/base.py',
    '/usr/lib/python3/dist-packages/placement/tests/functional/fixtures/placement.py',
    '/usr/lib/python3/dist-packages/pymysql/__init__.py',
    '/usr/lib/python3/dist-packages/oslotest/__init__.py',
    '/usr/lib/python3/dist-packages/wsgi_intercept/__init__.py',
    '/usr/lib/python3/dist-packages/etc/nova/api-paste.ini',
  ]
  return need.filter((p) => !existsSync(p))
}

export const ENABLE_HINT =
  'realnova tests skipped: real nova is not installed. Enable them with `bash .ci/run` or: apt-get install python3-nova python3-placement nova-common placement-common python3-pymysql python3-oslotest python3-ddt python3-testscenarios python3-wsgi-intercept && mkdir -p /usr/lib/python3/dist-packages/etc/nova && ln -sf /etc/nova/api-paste.ini /usr/lib/python3/dist-packages/etc/nova/api-paste.ini'

export interface RealCloud {
  scenario: string
  prefix: string
  databases: string[]
  api: string
  placement: string
  cells: Record<string, string>
  drop(): Promise<void>
}

async function factory(args: string[]): Promise<string> {
  const r = await execa(PYTHON, [`${HERE}factory.py`, ...args], {cwd: HERE, reject: false, timeout: 900_000})
  if (r.exitCode !== 0) throw new Error(`factory.py ${args[0]} failed (${r.exitCode}): ${String(r.stderr).trim().split('\n').slice(-3).join(' | ')}`)
  return String(r.stdout)
}

export async function realCloud(scenario: string): Promise<RealCloud> {
  const prefix = `rn_${scenario.slice(0, 12)}_${randomBytes(3).toString('hex')}`
  const out = JSON.parse(await factory(['cloud', '--scenario', scenario, '--prefix', prefix])) as Omit<RealCloud, 'drop' | 'prefix'>
  return {...out, prefix, drop: async () => void (await factory(['drop', '--prefix', prefix]))}
}
