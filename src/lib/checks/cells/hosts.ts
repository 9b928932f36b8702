/** The live nova-compute services with their host mappings and nodes, shared by the host codes. */
import type {FindingSubject} from '../../domain/finding.js'
import type {ComputeNode, HostMapping, Service} from '../../domain/snapshot.js'
import {push} from '../../util/multimap.js'
import type {AuditContext} from '../context.js'

export interface ComputeService {
  svc: Service & {host: string}
  mappings: HostMapping[]
  /** Live compute nodes of the service's host in its cell. */
  nodes: ComputeNode[]
  /** Made on first read: only a service with a finding is named (none on a clean cloud). */
  readonly subject: FindingSubject
}

class Entry implements ComputeService {
  private made?: FindingSubject

  constructor(
    private readonly ctx: AuditContext,
    readonly svc: Service & {host: string},
    readonly mappings: HostMapping[],
    readonly nodes: ComputeNode[],
  ) {}

  get subject(): FindingSubject {
    if (!this.made) {
      const {ctx, svc, nodes} = this
      const rp = nodes.length === 1 ? ctx.providerOf(nodes[0]) : undefined
      this.made = {
        cell: ctx.cellName(svc.cell_uuid),
        cell_uuid: svc.cell_uuid,
        host: svc.host,
        ...(nodes.length === 1 && nodes[0].hypervisor_hostname ? {node: nodes[0].hypervisor_hostname} : {}),
        ...(rp ? {provider_uuid: rp.uuid} : {}),
      }
    }
    return this.made
  }
}

export function computeServices(ctx: AuditContext): {services: ComputeService[]; hosts: ReadonlySet<string>} {
  return ctx.once(computeServices, () => {
    const {model} = ctx
    // Live compute nodes per service host and cell, built once (a scan per service is quadratic at 10k hosts).
    const nodesByHostCell = new Map<string, ComputeNode[]>()
    for (const cn of model.liveComputeNodes) if (cn.host !== null) push(nodesByHostCell, `${cn.cell_uuid}/${cn.host}`, cn)
    const services: ComputeService[] = []
    const hosts = new Set<string>()
    for (const svc of model.snapshot.nova.services) {
      if (svc.deleted !== 0 || svc.binary !== 'nova-compute' || svc.host === null) continue
      hosts.add(svc.host)
      const nodes = nodesByHostCell.get(`${svc.cell_uuid}/${svc.host}`) ?? []
      services.push(new Entry(ctx, svc as Service & {host: string}, ctx.hostMappingsByHost.get(svc.host) ?? [], nodes))
    }
    return {services, hosts}
  })
}

export const REPAIR_HOSTS = 'cloudctl cells discover-hosts'
