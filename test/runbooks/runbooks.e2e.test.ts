/**
 * Every runbook in docs/runbooks/ is executed as written, against its seed incident planted in
 * MariaDB, with the built CLI.
 *
 * Page format (docs/runbooks/README.md): in ```console blocks, `$ cloudctl ...` lines are run; the lines
 * after one, up to the next `$`, are fragments its output (stdout + stderr) must contain, each on one
 * line (`...` and unfilled `<placeholders>` match anything); `$ echo $?` followed by a number, or a
 * trailing `# ... exit N` comment, is the exit code it must return. `/etc/nova/nova.conf` is replaced by
 * a nova.conf pointing at the test databases, `<name>` placeholders by the scenario's values, and
 * `<undo-file>` by the undo file the latest command printed.
 */
import {mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {CELL0_UUID, type Snapshot} from '../../src/lib/domain/snapshot.js'
import {CloudBuilder, formatTs} from '../support/builders.js'
import {ROOT, cloudctl} from '../support/cli.js'
import {generateCloud} from '../support/generator.js'
import {addAllocations, baseCloud} from '../repairs/faults.js'
import {type RepairWorld, closeConnection, openConnection, repairWorld} from '../repairs/support.js'

const DIR = join(ROOT, 'docs', 'runbooks')

export interface RunbookStep {
  command: string
  expectOutput: string[]
  exitCode?: number
}

/** The cloudctl commands of a page, with what the page says they print and return. */
export function parseRunbook(markdown: string): RunbookStep[] {
  const steps: RunbookStep[] = []
  const blocks = [...markdown.matchAll(/```console\n([^]*?)```/g)].map((m) => m[1].split('\n'))
  for (const lines of blocks) {
    let cur: RunbookStep | undefined
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]
      if (line.trim() === '') continue
      if (line.startsWith('$ echo $?')) {
        const code = Number(lines[++i]?.trim())
        if (!cur || Number.isNaN(code)) throw new Error(`runbook: '$ echo $?' without a command before or a number after (line ${i})`)
        cur.exitCode = code
        continue
      }
      if (line.startsWith('$ ')) {
        const [cmd, comment] = splitComment(line.slice(2))
        if (!cmd.startsWith('cloudctl ')) throw new Error(`runbook: only cloudctl commands are run: ${line}`)
        const exit = comment ? /\bexit (\d)\b/.exec(comment) : null
        cur = {command: cmd.trim(), expectOutput: [], exitCode: exit ? Number(exit[1]) : undefined}
        steps.push(cur)
        continue
      }
      if (!cur) throw new Error(`runbook: output before any command: ${line}`)
      cur.expectOutput.push(line.trim())
    }
  }
  return steps
}

function splitComment(s: string): [string, string | undefined] {
  const i = s.indexOf(' #')
  return i < 0 ? [s, undefined] : [s.slice(0, i), s.slice(i + 2)]
}

/** A fragment as a regex: `...` and unfilled `<placeholders>` match anything, whitespace runs any whitespace. */
function fragmentRegex(fragment: string): RegExp {
  // `...` also absorbs the spaces around it: `= ? ... WHERE` matches `= ?, updated_at = ... WHERE`.
  const parts = fragment.split(/(\s*\.\.\.\s*|<[a-z0-9 _-]+>)/)
  const body = parts.map((p, i) => (i % 2 === 1 ? '.*?' : p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+'))).join('')
  return new RegExp(body)
}

interface Scenario {
  page: string
  /** The seed incident, planted before the seed is loaded. */
  build: () => {snapshot: Snapshot; vars: Record<string, string>; cells?: string[]}
  /** After loading: SQL adjustments (a service reporting now). */
  after?: (world: RepairWorld) => Promise<void>
}

async function serviceReportsNow(world: RepairWorld, host: string): Promise<void> {
  const conn = await openConnection(world.cloud.cellUrls.cell1)
  await conn.query('UPDATE services SET last_seen_up = UTC_TIMESTAMP(), updated_at = UTC_TIMESTAMP() WHERE host = ?', [host])
  await closeConnection(conn)
}

async function everyServiceReportsNow(world: RepairWorld): Promise<void> {
  const conn = await openConnection(world.cloud.cellUrls.cell1)
  await conn.query('UPDATE services SET last_seen_up = UTC_TIMESTAMP(), updated_at = UTC_TIMESTAMP()')
  await closeConnection(conn)
}

const SCENARIOS: Scenario[] = [
  {
    page: 'leak-after-host-death.md',
    build: () => {
      const b = new CloudBuilder({seed: 101, requestSpecs: false})
      b.addCell('cell1')
      b.addFlavor({name: 'm1.small', vcpus: 2, memory_mb: 2048, root_gb: 20})
      b.addHost('cell1', {host: 'compute1', vcpus: 16, memory_mb: 32768, local_gb: 500, down: true})
      b.addHost('cell1', {host: 'compute2', vcpus: 16, memory_mb: 32768, local_gb: 500})
      b.addInstance('compute2', 'm1.small')
      const gone = b.addInstance('compute1', 'm1.small').row.uuid
      b.deleteInstance(gone, {keepAllocations: true}) // local delete while compute1 was dead
      return {snapshot: b.build(), vars: {consumer: gone}}
    },
  },
  {
    page: 'stale-provider-after-service-delete.md',
    build: () => {
      const {b} = baseCloud(102)
      b.addHost('cell1', {host: 'compute9', vcpus: 16, memory_mb: 32768, local_gb: 500})
      const evacuated = b.addInstance('compute9', 'm1.small').row.uuid
      b.addMigration(evacuated, {type: 'evacuation', status: 'done', dest: 'compute2'})
      b.deleteComputeService('compute9', {keepProvider: true, keepHostMapping: true})
      const s = b.build()
      addAllocations(s, evacuated, 'compute9', {0: 2, 1: 2048, 2: 20}) // the evacuation's source allocation
      return {snapshot: s, vars: {consumer: evacuated, 'provider uuid': s.placement.resource_providers.find((p) => p.name === 'compute9')!.uuid}}
    },
  },
  {
    page: 'uuid-mismatch-after-hostname-change.md',
    build: () => {
      const {b} = baseCloud(103)
      b.addHost('cell1', {host: 'juju-6ae090-focal2-9.cloud.sts', vcpus: 16, memory_mb: 32768, local_gb: 500})
      b.addInstance('juju-6ae090-focal2-9.cloud.sts', 'm1.small')
      const {old, current} = b.recreateComputeNode('juju-6ae090-focal2-9.cloud.sts')
      return {snapshot: b.build(), vars: {'old uuid': old.uuid as string, 'compute node uuid': current.uuid as string}}
    },
  },
  {
    page: 'instance-in-cell0-and-cell1.md',
    build: () => {
      const {b} = baseCloud(104)
      b.addInstance('compute1', 'm1.small')
      const dup = b.addInstance('compute2', 'm1.small').row.uuid
      const s = b.build()
      const live = s.nova.instances.find((i) => i.uuid === dup)!
      s.nova.instances.push({...live, cell_uuid: CELL0_UUID, id: 1, host: null, node: null, vm_state: 'error', task_state: null})
      s.nova_api.instance_mappings.find((m) => m.instance_uuid === dup)!.cell_id = s.cells.find((c) => c.uuid === CELL0_UUID)!.id
      return {snapshot: s, vars: {uuid: dup, 'cell1 uuid': s.cells.find((c) => c.name === 'cell1')!.uuid}}
    },
  },
  {
    page: 'pinned-cpus-stuck-full.md',
    build: () => {
      const b = new CloudBuilder({seed: 105, requestSpecs: false})
      b.addCell('cell1')
      b.addFlavor({name: 'pinned', vcpus: 2, memory_mb: 2048, root_gb: 10, extra_specs: {'hw:cpu_policy': 'dedicated'}})
      b.addHost('cell1', {host: 'numa1', vcpus: 16, memory_mb: 32768, local_gb: 500, cpu_dedicated_set: '8-15'})
      b.addHost('cell1', {host: 'live1', vcpus: 16, memory_mb: 32768, local_gb: 500, cpu_dedicated_set: '8-15'})
      b.addInstance('numa1', 'pinned')
      b.addInstance('live1', 'pinned')
      const s = b.build()
      // Seed 004: every dedicated pCPU listed in pinned_cpus although only one instance pins two of them.
      for (const cn of s.nova.compute_nodes)
        cn.numa_topology = (cn.numa_topology as string).replace(
          /("pcpuset": \[)([^\]]*)(\][^]*?"pinned_cpus": )\[[^\]]*\]/g,
          (_m, a: string, set: string, c: string) => `${a}${set}${c}[${set}]`,
        )
      return {snapshot: s, vars: {}}
    },
    after: (world) => serviceReportsNow(world, 'live1'),
  },
  {
    page: 'negative-free-resources.md',
    build: () => {
      const g = generateCloud({
        seed: 106,
        hosts: 4,
        instances: 12,
        pinnedHostFraction: 0,
        now: formatTs(Date.now()),
        faults: {'usage.negative-free': 1, 'usage.node-drift': 1},
      })
      const drift = g.planted.find((p) => p.code === 'usage.node-drift')!.subject.host as string
      const negative = g.planted.find((p) => p.code === 'usage.negative-free')!.subject.host as string
      return {snapshot: g.snapshot, vars: {'drifting host': drift, 'overcommitted host': negative}}
    },
  },
  {
    page: 'novalidhost-which-stage.md',
    build: () => {
      // compute1 is full (RAM) and compute2 disabled: a boot fails, and where it fails differs per host.
      const b = new CloudBuilder({seed: 107})
      b.addCell('cell1')
      b.addFlavor({name: 'm1.large', vcpus: 4, memory_mb: 24576, root_gb: 40})
      b.addHost('cell1', {host: 'compute1', vcpus: 16, memory_mb: 32768, local_gb: 500})
      b.addHost('cell1', {host: 'compute2', vcpus: 16, memory_mb: 32768, local_gb: 500, disabled: true, disabled_reason: 'maintenance'})
      b.addHost('cell1', {host: 'compute3', vcpus: 16, memory_mb: 32768, local_gb: 500, down: true})
      const uuid = b.addInstance('compute1', 'm1.large').row.uuid
      return {snapshot: b.build(), vars: {uuid}}
    },
    after: (world) => Promise.all(['compute1', 'compute2'].map((h) => serviceReportsNow(world, h))).then(() => undefined),
  },
  {
    page: 'new-compute-never-scheduled.md',
    build: () => {
      const {b} = baseCloud(108)
      b.addHost('cell1', {host: 'compute3', vcpus: 16, memory_mb: 32768, local_gb: 500})
      b.removeHostMapping('compute3') // nova-manage cell_v2 discover_hosts was never run for it
      const s = b.build()
      s.nova.compute_nodes.find((c) => c.host === 'compute3')!.mapped = 0
      return {snapshot: s, vars: {}}
    },
    after: everyServiceReportsNow,
  },
  {
    page: 'aggregates-out-of-sync.md',
    build: () => {
      const {b} = baseCloud(109)
      const agg = b.addAggregate({name: 'az-ssd', hosts: ['compute1', 'compute2'], metadata: {availability_zone: 'az-ssd'}})
      b.addInstance('compute1', 'm1.small')
      const s = b.build()
      // compute2's provider lost the placement aggregate (a host added while placement was unreachable).
      const rp = s.placement.resource_providers.find((p) => p.name === 'compute2')!
      const pagg = s.placement.placement_aggregates.find((a) => a.uuid === agg.uuid)!
      s.placement.resource_provider_aggregates = s.placement.resource_provider_aggregates.filter(
        (l) => !(l.resource_provider_id === rp.id && l.aggregate_id === pagg.id),
      )
      return {snapshot: s, vars: {'aggregate uuid': agg.uuid as string, 'compute2 provider uuid': rp.uuid as string}}
    },
    after: everyServiceReportsNow,
  },
]

describe('runbooks (docs/runbooks, CLI, MariaDB)', () => {
  const worlds: RepairWorld[] = []
  afterAll(async () => {
    for (const w of worlds) await w.drop()
  })

  it('one scenario per page, one page per scenario', () => {
    const pages = readdirSync(DIR).filter((f) => f.endsWith('.md') && f !== 'README.md')
    expect(pages.sort()).toEqual(SCENARIOS.map((s) => s.page).sort())
  })

  it.each(SCENARIOS.map((s) => [s.page] as const))('%s opens with the symptom, brackets the work with snapshots, cross-checks with nova tools', (page) => {
    const md = readFileSync(join(DIR, page), 'utf8')
    const intro = md
      .split('\n')
      .slice(1)
      .find((l) => l.trim() !== '')
    expect(intro, 'the first paragraph is what the operator sees').toMatch(/^\*\*What you see:\*\*/)
    expect(md).toContain('Capture a snapshot first (`cloudctl snapshot capture -o before.cloudctl`), `cloudctl snapshot diff` after.')
    const steps = parseRunbook(md)
    expect(steps[0].command, 'the first command captures the snapshot').toMatch(/^cloudctl snapshot capture -o before\.cloudctl\b/)
    expect(steps.at(-1)!.command, 'the last command compares with it').toMatch(/^cloudctl snapshot diff before\.cloudctl live\b/)
    const sh = [...md.matchAll(/```sh\n([^]*?)```/g)].map((m) => m[1]).join('\n')
    expect(sh, 'a cross-check with the openstack CLI or nova-manage').toMatch(/^(openstack|nova-manage) /m)
  })

  it.each(SCENARIOS.map((s) => [s.page, s] as const))('%s', async (_page, scenario) => {
    const steps = parseRunbook(readFileSync(join(DIR, scenario.page), 'utf8'))
    expect(steps.length).toBeGreaterThan(2)
    expect(
      steps.every((s) => s.exitCode !== undefined),
      'every command says its exit code',
    ).toBe(true)
    const {snapshot, vars, cells} = scenario.build()
    const world = await repairWorld(`rb_${scenario.page.slice(0, 12).replace(/\W/g, '_')}`, snapshot, cells)
    worlds.push(world)
    await scenario.after?.(world)
    const tmp = mkdtempSync(join(tmpdir(), 'cloudctl-runbook-'))
    const conf = join(tmp, 'nova.conf')
    writeFileSync(conf, `[api_database]\nconnection = ${world.cloud.apiUrl}\n\n[placement_database]\nconnection = ${world.cloud.placementUrl}\n`, {mode: 0o600})
    // The runbooks show each table row on one line, as a wide terminal does (piped output wraps at 120).
    const env = {COLUMNS: '1000', CLOUDCTL_UNDO_DIR: join(tmp, 'undo'), CLOUDCTL_AUDIT_LOG: join(tmp, 'audit.log'), XDG_STATE_HOME: tmp, XDG_CONFIG_HOME: tmp}
    let undoFile: string | undefined
    const fill = (s: string) => {
      let out = s.replaceAll('/etc/nova/nova.conf', conf)
      // The pages' snapshot files (`-o before.cloudctl`) go to the scenario's directory, not the cwd.
      out = out.replace(/(?<![\w/.-])((?:before|after)\.cloudctl)\b/g, (m) => join(tmp, m))
      for (const [k, v] of Object.entries(vars)) out = out.replaceAll(`<${k}>`, v)
      if (undoFile) out = out.replaceAll('<undo-file>', undoFile)
      return out
    }
    for (const step of steps) {
      const command = fill(step.command)
      expect(command, 'every placeholder of a command is filled').not.toMatch(/<[a-z0-9 _-]+>/)
      const r = await cloudctl(command.split(/\s+/).slice(1), {env})
      const output = `${r.stdout}\n${r.stderr}`
      if (process.env.RUNBOOK_DUMP) console.log(`$ ${step.command}  [exit ${r.exitCode}]\n${output}`)
      const lines = output.split('\n')
      for (const fragment of step.expectOutput) {
        const re = fragmentRegex(fill(fragment))
        expect(
          lines.some((l) => re.test(l)),
          `${scenario.page}: \`${step.command}\` should print a line matching ${JSON.stringify(fragment)}; it printed:\n${output}`,
        ).toBe(true)
      }
      expect(r.exitCode, `${scenario.page}: \`${step.command}\` exit code; output:\n${output}`).toBe(step.exitCode)
      undoFile = /Undo file: (\S+)/.exec(r.stdout)?.[1] ?? undoFile
    }
  })
})
