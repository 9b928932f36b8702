/**
 * A filter flag of a repair (--consumer, --provider) must name something this cloud has: a typo
 * otherwise reads as "Nothing to do", exit 0, as if the cloud were clean. Like --host of the
 * host-row repairs (requireComputeHost), an unknown value is a usage error, exit 2, and the hint names
 * what would have matched.
 */
import {runChecks} from '../checks/index.js'
import type {CheckName, FindingSubject} from '../domain/finding.js'
import type {CloudModel} from '../domain/model.js'
import type {Snapshot} from '../domain/snapshot.js'
import {CloudctlError, ExitCode, NotFoundError} from '../errors.js'

const SHOWN = 8

function listed(values: string[]): string {
  const shown = values.slice(0, SHOWN).join(', ')
  return values.length > SHOWN ? `${shown}, ... (${values.length} in all)` : shown
}

/** The values of one subject field over the findings of a check: what the filter would match. */
function withFindings(model: CloudModel, check: CheckName, pick: (s: FindingSubject) => Array<string | undefined>): string[] {
  const values = runChecks(model, {checks: [check]})
    .findings.filter((f) => f.check === check)
    .flatMap((f) => pick(f.subject))
  return [...new Set(values.filter((v): v is string => typeof v === 'string' && v !== ''))].sort()
}

function unknown(what: string, hint: string): CloudctlError {
  return new CloudctlError(what, {exitCode: ExitCode.CONFIG, code: 'NotFoundError', hint})
}

/** --cell of the audits and `hosts list`: a cell_mappings name or uuid. */
export function requireKnownCell(snapshot: Pick<Snapshot, 'cells'>, cell: string | undefined): void {
  if (cell === undefined || snapshot.cells.some((c) => c.name === cell || c.uuid === cell)) return
  throw new NotFoundError(`cell "${cell}" is not in cell_mappings`, `Known cells: ${snapshot.cells.map((c) => c.name ?? c.uuid).join(', ')}`)
}

/**
 * --host of the audits and the repairs: anything nova or placement knows by that name (a service, a
 * compute node, a host mapping, a provider, an instance's host or node).
 */
export function requireKnownHost(snapshot: Snapshot, host: string | undefined): void {
  if (host === undefined) return
  const known =
    snapshot.nova.services.some((r) => r.host === host) ||
    snapshot.nova.compute_nodes.some((r) => r.host === host || r.hypervisor_hostname === host) ||
    snapshot.nova_api.host_mappings.some((r) => r.host === host) ||
    snapshot.placement.resource_providers.some((r) => r.name === host) ||
    snapshot.nova.instances.some((r) => r.host === host || r.node === host)
  if (!known)
    throw new NotFoundError(
      `host "${host}" is not a service, compute node, host mapping or resource provider of this cloud`,
      'See `cloudctl hosts list` for the hosts.',
    )
}

/** --consumer of `repair leaks`: an allocation consumer, a placement consumer, an instance or a migration. */
export function requireKnownConsumer(model: CloudModel, consumer: string | undefined): void {
  if (consumer === undefined) return
  if (
    model.allocationsByConsumer.has(consumer) ||
    model.consumersByUuid.has(consumer) ||
    model.instancesByUuid.has(consumer) ||
    model.migrationsByUuid.has(consumer)
  )
    return
  const ids = withFindings(model, 'leaks', (s) => [s.consumer_uuid])
  throw unknown(
    `consumer "${consumer}" is not an allocation consumer, instance or migration of this cloud`,
    ids.length > 0 ? `Consumers with leak findings: ${listed(ids)} (cloudctl audit leaks).` : 'No consumer has a leak finding (cloudctl audit leaks).',
  )
}

/** --provider of `repair providers`: a provider uuid or name, or a compute node's host or node name. */
export function requireKnownProvider(model: CloudModel, provider: string | undefined): void {
  if (provider === undefined) return
  if (model.providersByUuid.has(provider) || model.providersByName.has(provider)) return
  const nodes = model.snapshot.nova.compute_nodes
  if (nodes.some((cn) => cn.host === provider || cn.hypervisor_hostname === provider || cn.uuid === provider)) return
  const names = withFindings(model, 'providers', (s) => [s.provider_uuid, s.host, s.node])
  throw unknown(
    `provider "${provider}" is not a resource provider (uuid or name) or compute node of this cloud`,
    names.length > 0 ? `Providers with findings: ${listed(names)} (cloudctl audit providers).` : 'No provider has a finding (cloudctl audit providers).',
  )
}
