/**
 * The state every builder family writes: the rows of each table (and the indexes kept beside them),
 * the id sequences, the fixed clock and the seeded random source, with the lookups and id helpers
 * all families share. CloudBuilder is one class assembled by table family, each family a class
 * extending the one before (placement, nova_api, computes, instances, migrations) so that each file
 * reads whole; the state lives here so that any family can write any table, as nova does when one
 * operation touches several databases.
 */
import {
  type Aggregate,
  CELL0_UUID,
  type CellInfo,
  type ComputeNode,
  type Consumer,
  type Flavor,
  type HostMapping,
  type Instance,
  type InstanceGroup,
  type InstanceMapping,
  type Migration,
  type Service,
} from '../../../src/lib/domain/snapshot.js'
import {CUSTOM_RESOURCE_CLASS_MIN_ID, STANDARD_RESOURCE_CLASSES} from '../../../src/lib/domain/resource-classes.js'
import {DEFAULT_NOW, formatTs, type InstanceNumaCellSpec, instanceNumaTopologyBlob, parseTs, Rng} from './blobs.js'
import type {FlavorResources} from './resources.js'
import type {RealShapes} from './real-shapes.js'
import {
  type CloudBuilderOptions,
  type HostRec,
  type InstanceRec,
  type MigrationRec,
  type ProviderRec,
  DEFAULT_COMPUTE_TRAITS,
  STANDARD_TRAITS,
} from './specs.js'

export abstract class BuilderState {
  readonly rng: Rng
  readonly now: string
  readonly nowMs: number
  readonly strict: boolean
  readonly requestSpecs: boolean
  readonly defaultTraits: string[]
  readonly shapes: RealShapes | null
  readonly cells: CellInfo[] = []
  protected readonly cellsByName = new Map<string, CellInfo>()
  readonly flavors = new Map<string, Flavor>()
  protected readonly flavorBlobs = new Map<Flavor, string>()
  readonly hosts: HostRec[] = []
  readonly hostsByNode = new Map<string, HostRec>()
  readonly hostsByHost = new Map<string, HostRec[]>()
  readonly instances = new Map<string, InstanceRec>()
  readonly migrations = new Map<string, MigrationRec>()
  readonly providers = new Map<string, ProviderRec>()
  protected readonly providerList: ProviderRec[] = []
  protected readonly services: Service[] = []
  protected readonly computeNodes: ComputeNode[] = []
  protected readonly instanceRows: Instance[] = []
  protected readonly migrationRows: Migration[] = []
  protected readonly hostMappings: HostMapping[] = []
  protected readonly hostMappingByHost = new Map<string, HostMapping>()
  protected readonly instanceMappings: InstanceMapping[] = []
  protected readonly aggregates: Aggregate[] = []
  readonly aggregatesByName = new Map<string, Aggregate>()
  protected readonly aggregateHosts = new Map<Aggregate, Set<string>>()
  protected readonly placementAggIdByUuid = new Map<string, number>()
  protected readonly placementAggs: Array<{id: number; uuid: string | null}> = []
  protected readonly groups: InstanceGroup[] = []
  protected readonly requestSpecRows: Array<{instance_uuid: string; spec: string}> = []
  /** consumer uuid -> allocations (ids assigned at build()) */
  readonly allocations = new Map<string, Array<{rp: ProviderRec; rc: number; used: number}>>()
  readonly consumers = new Map<string, Consumer>()
  protected readonly projects = new Map<string, number>()
  protected readonly users = new Map<string, number>()
  protected readonly traitIds = new Map<string, number>()
  protected readonly customRcs = new Map<string, number>()
  protected seq = {service: 0, cn: 0, inst: 0, mig: 0, rp: 0, inv: 0, hm: 0, im: 0, agg: 0, pagg: 0, consumer: 0, flavor: 0, group: 0, project: 0, user: 0}
  readonly defaultProject: string
  readonly defaultUser: string
  protected readonly imageId: string
  protected readonly resCache = new Map<string, FlavorResources>()

  constructor(opts: CloudBuilderOptions = {}) {
    this.rng = new Rng(opts.seed ?? 1)
    this.now = opts.now ?? DEFAULT_NOW
    this.nowMs = parseTs(this.now)
    this.strict = opts.strict ?? true
    this.requestSpecs = opts.requestSpecs ?? true
    this.shapes = opts.shapes ?? null
    this.defaultTraits = opts.defaultTraits ?? this.shapes?.traits ?? DEFAULT_COMPUTE_TRAITS
    for (const t of [...STANDARD_TRAITS, ...this.defaultTraits]) this.traitId(t)
    this.defaultProject = this.rng.hex(32)
    this.defaultUser = this.rng.hex(32)
    this.imageId = this.rng.uuid()
    this.addCellRow('cell0', CELL0_UUID)
  }

  newUuid(): string {
    return this.rng.uuid()
  }

  /** A keystone-style id (32 hex). */
  newProjectId(): string {
    return this.rng.hex(32)
  }

  ago(seconds: number): string {
    return formatTs(this.nowMs - seconds * 1000)
  }

  traitId(name: string): number {
    let id = this.traitIds.get(name)
    if (id === undefined) this.traitIds.set(name, (id = this.traitIds.size + 1))
    return id
  }

  /** Id of a standard class, or of a CUSTOM_* class (registered on first use). */
  rcId(name: string): number {
    const std = (STANDARD_RESOURCE_CLASSES as readonly string[]).indexOf(name)
    if (std >= 0) return std
    if (!name.startsWith('CUSTOM_')) throw new Error(`unknown resource class ${name}`)
    let id = this.customRcs.get(name)
    if (id === undefined) this.customRcs.set(name, (id = CUSTOM_RESOURCE_CLASS_MIN_ID + this.customRcs.size))
    return id
  }

  rcName(id: number): string {
    if (id < CUSTOM_RESOURCE_CLASS_MIN_ID) return STANDARD_RESOURCE_CLASSES[id]
    for (const [n, i] of this.customRcs) if (i === id) return n
    return `UNKNOWN_RC_${id}`
  }

  protected projectRow(external: string): number {
    let id = this.projects.get(external)
    if (id === undefined) this.projects.set(external, (id = ++this.seq.project))
    return id
  }

  protected userRow(external: string): number {
    let id = this.users.get(external)
    if (id === undefined) this.users.set(external, (id = ++this.seq.user))
    return id
  }

  externalProject(id: number): string {
    for (const [ext, i] of this.projects) if (i === id) return ext
    throw new Error(`no project row ${id}`)
  }

  externalUser(id: number): string {
    for (const [ext, i] of this.users) if (i === id) return ext
    throw new Error(`no user row ${id}`)
  }

  /** Placement's project/user rows for an external id (created on first use). */
  placementProjectId(external: string): number {
    return this.projectRow(external)
  }

  placementUserId(external: string): number {
    return this.userRow(external)
  }

  protected addCellRow(name: string, uuid: string): CellInfo {
    const id = this.cells.length + 1
    const cell0 = uuid === CELL0_UUID
    const db = cell0 ? 'nova_cell0' : `nova_${name.replace(/[^a-zA-Z0-9_]/g, '_')}`
    const cell: CellInfo = {
      id,
      uuid,
      name,
      database_connection: `mysql+pymysql://nova:***@10.0.0.${4 + id}/${db}?charset=utf8`,
      transport_url: cell0 ? 'none:///' : `rabbit://nova:***@10.0.0.${4 + id}:5672/`,
      disabled: false,
      is_cell0: cell0,
      status: 'available',
    }
    this.cells.push(cell)
    this.cellsByName.set(name, cell)
    return cell
  }

  addCell(name: string, opts: {uuid?: string} = {}): CellInfo {
    if (this.cellsByName.has(name)) throw new Error(`cell ${name} exists`)
    return this.addCellRow(name, opts.uuid ?? this.rng.uuid())
  }

  cell(name: string): CellInfo {
    const c = this.cellsByName.get(name) ?? this.cells.find((x) => x.uuid === name)
    if (!c) throw new Error(`no cell ${name}`)
    return c
  }

  get cell0(): CellInfo {
    return this.cells[0]
  }

  flavor(name: string): Flavor {
    const f = this.flavors.get(name)
    if (!f) throw new Error(`no flavor ${name}`)
    return f
  }

  serverGroup(name: string): InstanceGroup {
    const g = this.groups.find((x) => x.name === name || x.uuid === name)
    if (!g) throw new Error(`no server group ${name}`)
    return g
  }

  provider(uuidOrName: string): ProviderRec {
    const byUuid = this.providers.get(uuidOrName)
    if (byUuid) return byUuid
    const byNode = this.hostsByNode.get(uuidOrName)
    if (byNode) return byNode.rp
    const byName = this.providerList.find((p) => p.row.name === uuidOrName)
    if (!byName) throw new Error(`no provider ${uuidOrName}`)
    return byName
  }

  /** A host or node by name: node name first, then a host with exactly one node. */
  hostRec(hostOrNode: string, node?: string): HostRec {
    if (node !== undefined) {
      const r = this.hostsByNode.get(node)
      if (!r || r.host !== hostOrNode) throw new Error(`no node ${node} on host ${hostOrNode}`)
      return r
    }
    const byNode = this.hostsByNode.get(hostOrNode)
    if (byNode) return byNode
    const list = this.hostsByHost.get(hostOrNode)
    if (!list || list.length === 0) throw new Error(`no host ${hostOrNode}`)
    if (list.length > 1) throw new Error(`host ${hostOrNode} has ${list.length} nodes: name one`)
    return list[0]
  }

  /** instance_extra.numa_topology of an instance of `f` with these cells. */
  instanceNumaBlob(f: Flavor, cells: InstanceNumaCellSpec[]): string {
    return this.shapes ? this.shapes.instanceNuma(f, cells) : instanceNumaTopologyBlob(cells)
  }

  instance(uuid: string): InstanceRec {
    const r = this.instances.get(uuid)
    if (!r) throw new Error(`no instance ${uuid}`)
    return r
  }
}
