/** Human rendering of a `simulate migrate` result (the JSON form is the result itself). */
import type {MigrationResult} from '../engine/migrate.js'
import type {Display} from './display.js'
import {renderSimulation} from './simulation-formatter.js'
import {theme} from './theme.js'

export function renderMigration(r: MigrationResult, d: Display, opts: {explain?: boolean; why?: string[]} = {}): string {
  const c = theme()
  const i = r.instance
  const out: string[] = []
  const where = `${i.host}${i.node && i.node !== i.host ? `/${i.node}` : ''}`
  out.push(
    c.bold(`${r.kind === 'live' ? 'Live' : 'Cold'} migration of ${i.uuid}${i.name ? ` (${i.name})` : ''} from ${where}`) +
      ` in cell ${i.cell}` +
      (r.requested_host ? `, requested destination ${r.requested_host}` : ', destination chosen by the scheduler'),
  )
  out.push('', c.bold('Checks before scheduling'))
  for (const k of r.checks) out.push(`  ${k.ok ? c.green('ok') : c.red('refused')}  ${k.name}: ${k.detail}`)
  if (!r.refusal) {
    out.push('', c.bold('What the move changes in the request'))
    out.push(
      r.same_host_allowed
        ? `  the source stays a candidate: its provider reports COMPUTE_SAME_HOST_COLD_MIGRATE`
        : `  ignore_hosts ${i.host}: the source host is never a destination${r.kind === 'cold' ? ' (its provider does not report COMPUTE_SAME_HOST_COLD_MIGRATE)' : ''}`,
    )
    out.push('  force_hosts/force_nodes reset; one instance (this one, already a member of its server group); hosts of its cell only')
    const held = r.source_allocations.map((a) => `${a.resource_class}=${a.amount}@${a.provider}`).join(', ')
    out.push(
      `  the migration record holds the instance's allocations during the move (${held || 'none'}): placement counts them on the source only, and the destination is asked for the new claim`,
    )
    for (const n of r.not_simulated) out.push(`  not simulated: ${n}`)
  }
  if (r.attempts.length > 1 || r.attempts.some((a) => a.check && !a.check.ok)) {
    out.push('', c.bold('Attempts (select_destinations, then the conductor checks the host)'))
    r.attempts.forEach((a, n) =>
      out.push(
        `  ${n + 1}. ignore_hosts ${a.ignore_hosts.join(', ') || '(none)'} -> ${a.chosen ?? 'NoValidHost'}${a.check ? `; ${a.check.ok ? 'ok' : 'failed'}: ${a.check.detail}` : ''}`,
      ),
    )
  }
  if (r.simulation) out.push('', renderSimulation(r.simulation, d, {...opts, verb: 'Schedule'}))
  if (r.refusal || r.destination) out.push('', r.destination ? c.green(`Destination: ${r.summary}`) : c.red(r.summary))
  return out.join('\n')
}
