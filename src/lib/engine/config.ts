/**
 * Scheduler configuration, named as in nova.conf. The defaults are those of the nova release the
 * simulation stands for: Zed (nova 26 / placement 8) or 2025.1 (nova 31 / placement 13), read from
 * each release's nova/conf/scheduler.py, nova/conf/compute.py, placement/conf/placement.py and its
 * scheduler/weights and scheduler/filters directories.
 */
import {NOVA_DEFAULT_AVAILABILITY_ZONE} from '../domain/availability-zone.js'
import {ConfigError} from '../errors.js'

/**
 * The releases whose defaults the engine knows (each verified against that release's own code).
 * 2026.1 (nova 33 / placement 15) and 2026.2 (nova 34 / placement 16) keep 2025.1's filters,
 * weighers, multipliers and placement options (their nova/conf/scheduler.py only deprecates two
 * options, placement/conf/placement.py is unchanged): what they add is request traits, which
 * docs/engine.md lists as not modelled.
 */
export const ENGINE_RELEASES = ['zed', '2025.1', '2026.1', '2026.2'] as const
export type EngineRelease = (typeof ENGINE_RELEASES)[number]

export const ZED_DEFAULT_FILTERS = [
  'ComputeFilter',
  'ComputeCapabilitiesFilter',
  'ImagePropertiesFilter',
  'ServerGroupAntiAffinityFilter',
  'ServerGroupAffinityFilter',
] as const

/** `weight_classes = nova.scheduler.weights.all_weighers`, in the order the loader returns them. */
export const ALL_WEIGHERS = [
  'RAMWeigher',
  'CPUWeigher',
  'DiskWeigher',
  'IoOpsWeigher',
  'PCIWeigher',
  'ServerGroupSoftAffinityWeigher',
  'ServerGroupSoftAntiAffinityWeigher',
  'BuildFailureWeigher',
  'CrossCellWeigher',
] as const

/** Weighers that nova 31 (2025.1) loads beside Zed's: all_weighers finds them in the same directory. */
export const WEIGHERS_ADDED_AFTER_ZED = ['HypervisorVersionWeigher', 'NumInstancesWeigher', 'ImagePropertiesWeigher'] as const

/** `all_weighers` of a release. */
export function allWeighers(release: EngineRelease): string[] {
  return release === 'zed' ? [...ALL_WEIGHERS] : [...ALL_WEIGHERS, ...WEIGHERS_ADDED_AFTER_ZED]
}

/**
 * Filters and weighers a release's nova does not have: naming one in enabled_filters /
 * weight_classes stops nova-scheduler from starting (the loader finds no such class), so the
 * engine refuses it the same way.
 */
const NOT_IN_RELEASE: Record<EngineRelease, Record<string, string>> = {
  zed: Object.fromEntries(WEIGHERS_ADDED_AFTER_ZED.map((w) => [w, 'added after Zed'])),
  // nova 31 deleted nova/scheduler/filters/availability_zone_filter.py (placement's AZ prefilter
  // is the only way); the option that turned that prefilter off went with it.
  '2025.1': {AvailabilityZoneFilter: 'removed before 2025.1: availability zones are always mapped to placement aggregates'},
  '2026.1': {AvailabilityZoneFilter: 'removed before 2025.1: availability zones are always mapped to placement aggregates'},
  '2026.2': {AvailabilityZoneFilter: 'removed before 2025.1: availability zones are always mapped to placement aggregates'},
}

/** Names of `enabled_filters` / `weight_classes` the config's release lacks, with why. */
export function notInRelease(cfg: SchedulerConfig): string[] {
  const missing = NOT_IN_RELEASE[cfg.release]
  return [...cfg.enabled_filters, ...cfg.weight_classes].flatMap((raw) => {
    const name = raw.split('.').pop() as string
    const why = missing[name]
    return why === undefined ? [] : [`${name} (${why})`]
  })
}

export interface PciAlias {
  name: string
  vendor_id?: string
  product_id?: string
  device_type?: string
  numa_policy?: string
}

export interface SchedulerConfig {
  /** The nova release whose behaviour and defaults are simulated. */
  release: EngineRelease
  // [filter_scheduler]
  enabled_filters: string[]
  weight_classes: string[]
  host_subset_size: number
  shuffle_best_same_weighed_hosts: boolean
  ram_weight_multiplier: number
  cpu_weight_multiplier: number
  disk_weight_multiplier: number
  io_ops_weight_multiplier: number
  pci_weight_multiplier: number
  soft_affinity_weight_multiplier: number
  soft_anti_affinity_weight_multiplier: number
  build_failure_weight_multiplier: number
  cross_cell_move_weight_multiplier: number
  /** 2025.1: HypervisorVersionWeigher (default 1.0, prefers newer hypervisors). */
  hypervisor_version_weight_multiplier: number
  /** 2025.1: NumInstancesWeigher (default 0.0). */
  num_instances_weight_multiplier: number
  /** 2025.1: ImagePropertiesWeigher (default 0.0: the weigher returns 0 without looking). */
  image_props_weight_multiplier: number
  /** 2025.1: [filter_scheduler] image_props_weight_setting, parsed (property -> ratio). */
  image_props_weight_setting: Record<string, number>
  max_io_ops_per_host: number
  max_instances_per_host: number
  isolated_hosts: string[]
  isolated_images: string[]
  restrict_isolated_hosts_to_isolated_images: boolean
  image_properties_default_architecture: string | null
  // [scheduler]
  max_placement_results: number
  limit_tenants_to_placement_aggregate: boolean
  placement_aggregate_required_for_tenants: boolean
  query_placement_for_availability_zone: boolean
  query_placement_for_image_type_support: boolean
  enable_isolated_aggregate_filtering: boolean
  image_metadata_prefilter: boolean
  // [DEFAULT]
  service_down_time: number
  /** Read from nova.conf by config/nova-conf.ts defaultAvailabilityZone (the one reader), not by applyNovaConf. */
  default_availability_zone: string
  cpu_allocation_ratio: number | null
  ram_allocation_ratio: number | null
  disk_allocation_ratio: number | null
  initial_cpu_allocation_ratio: number
  initial_ram_allocation_ratio: number
  initial_disk_allocation_ratio: number
  // [compute]
  packing_host_numa_cells_allocation_strategy: boolean
  // [pci] alias
  pci_alias: PciAlias[]
  /**
   * placement.conf [placement] of placement 13 (2025.1): a cap on the candidates placement
   * generates (-1: none) and the order it visits root providers in while generating them.
   */
  max_allocation_candidates: number
  allocation_candidates_generation_strategy: 'depth-first' | 'breadth-first'
}

/**
 * The defaults of a release. The default enabled_filters and every multiplier Zed has are the same
 * in nova 31; 2025.1 adds three weighers (HypervisorVersionWeigher at 1.0, the other two at 0.0),
 * drops query_placement_for_availability_zone (always on) and, in placement 13, adds the candidate
 * cap (off by default).
 */
export function defaultSchedulerConfig(release: EngineRelease = 'zed'): SchedulerConfig {
  return {
    release,
    enabled_filters: [...ZED_DEFAULT_FILTERS],
    weight_classes: allWeighers(release),
    host_subset_size: 1,
    shuffle_best_same_weighed_hosts: false,
    ram_weight_multiplier: 1.0,
    cpu_weight_multiplier: 1.0,
    disk_weight_multiplier: 1.0,
    io_ops_weight_multiplier: -1.0,
    pci_weight_multiplier: 1.0,
    soft_affinity_weight_multiplier: 1.0,
    soft_anti_affinity_weight_multiplier: 1.0,
    build_failure_weight_multiplier: 1000000.0,
    cross_cell_move_weight_multiplier: 1000000.0,
    // Zed has neither the weighers nor the options; the values only matter when a weigher runs.
    hypervisor_version_weight_multiplier: release === 'zed' ? 0.0 : 1.0,
    num_instances_weight_multiplier: 0.0,
    image_props_weight_multiplier: 0.0,
    image_props_weight_setting: {},
    max_io_ops_per_host: 8,
    max_instances_per_host: 50,
    isolated_hosts: [],
    isolated_images: [],
    restrict_isolated_hosts_to_isolated_images: true,
    image_properties_default_architecture: null,
    max_placement_results: 1000,
    limit_tenants_to_placement_aggregate: false,
    placement_aggregate_required_for_tenants: false,
    query_placement_for_availability_zone: true,
    query_placement_for_image_type_support: false,
    enable_isolated_aggregate_filtering: false,
    image_metadata_prefilter: false,
    service_down_time: 60,
    default_availability_zone: NOVA_DEFAULT_AVAILABILITY_ZONE,
    cpu_allocation_ratio: null,
    ram_allocation_ratio: null,
    disk_allocation_ratio: null,
    initial_cpu_allocation_ratio: 16.0,
    initial_ram_allocation_ratio: 1.5,
    initial_disk_allocation_ratio: 1.0,
    packing_host_numa_cells_allocation_strategy: false,
    pci_alias: [],
    max_allocation_candidates: -1,
    allocation_candidates_generation_strategy: 'depth-first',
  }
}

/** Short names accepted by `--multiplier NAME=VALUE`, mapped to the nova option. */
export const MULTIPLIER_ALIASES: Record<string, keyof SchedulerConfig> = {
  ram: 'ram_weight_multiplier',
  cpu: 'cpu_weight_multiplier',
  disk: 'disk_weight_multiplier',
  io_ops: 'io_ops_weight_multiplier',
  pci: 'pci_weight_multiplier',
  soft_affinity: 'soft_affinity_weight_multiplier',
  soft_anti_affinity: 'soft_anti_affinity_weight_multiplier',
  build_failure: 'build_failure_weight_multiplier',
  cross_cell_move: 'cross_cell_move_weight_multiplier',
  hypervisor_version: 'hypervisor_version_weight_multiplier',
  num_instances: 'num_instances_weight_multiplier',
  image_props: 'image_props_weight_multiplier',
}

/** Parse `ram=2.0` or `ram_weight_multiplier=2.0`; returns the option name and value or an error text. */
export function parseMultiplier(text: string): {option: keyof SchedulerConfig; value: number} | {error: string} {
  const m = /^([a-z_]+)=(.+)$/.exec(text.trim())
  if (!m) return {error: `"${text}" is not NAME=VALUE`}
  const name = m[1] as string
  const option =
    MULTIPLIER_ALIASES[name] ?? (Object.values(MULTIPLIER_ALIASES).includes(name as keyof SchedulerConfig) ? (name as keyof SchedulerConfig) : undefined)
  if (!option) return {error: `unknown multiplier "${name}" (known: ${Object.keys(MULTIPLIER_ALIASES).join(', ')})`}
  const value = Number(m[2])
  if (!Number.isFinite(value)) return {error: `${name} must be a number, got "${m[2]}"`}
  return {option, value}
}

/**
 * `name=ratio, name=ratio` as nova's utils.parse_options reads image_props_weight_setting: a
 * pair without '=' or with a ratio that is not a number is skipped (nova logs a warning).
 */
export function parseWeightSetting(items: string[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const item of items) {
    const eq = item.indexOf('=')
    if (eq < 0) continue
    // the name is kept as written (nova partitions on '=' and does not strip it)
    const name = item.slice(0, eq)
    const text = item.slice(eq + 1).trim()
    const value = Number(text)
    if (name === '' || text === '' || !Number.isFinite(value)) continue
    out[name] = value
  }
  return out
}

/**
 * Apply nova.conf sections (as parsed INI: section -> key -> string) over a config. Unknown keys
 * are ignored, as oslo.config ignores options it does not register: an option a release does not
 * have is ignored for that release. placement.conf's [placement] candidate options are read from
 * the same sections (nova's own [placement] section is keystone auth, which the engine ignores).
 */
export function applyNovaConf(cfg: SchedulerConfig, sections: Record<string, Record<string, unknown>>): SchedulerConfig {
  const out = {...cfg}
  const get = (section: string, key: string): string | undefined => {
    const sec = sections[section] ?? sections[section.toUpperCase()]
    const v = sec?.[key]
    return v === undefined || v === null ? undefined : String(v).trim()
  }
  const list = (v: string) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
  const bool = (v: string) => /^(true|yes|on|1)$/i.test(v)
  const fs = 'filter_scheduler'
  const strList: Array<[string, string, keyof SchedulerConfig]> = [
    [fs, 'enabled_filters', 'enabled_filters'],
    [fs, 'isolated_hosts', 'isolated_hosts'],
    [fs, 'isolated_images', 'isolated_images'],
  ]
  for (const [sec, key, opt] of strList) {
    const v = get(sec, key)
    if (v !== undefined) (out as Record<string, unknown>)[opt] = list(v)
  }
  const wc = get(fs, 'weight_classes')
  if (wc !== undefined) {
    out.weight_classes = list(wc).flatMap((w) => (w.endsWith('all_weighers') ? allWeighers(out.release) : [w.split('.').pop() as string]))
  }
  const epoxy = out.release !== 'zed'
  const nums: Array<[string, keyof SchedulerConfig]> = [
    [fs, 'host_subset_size'],
    [fs, 'ram_weight_multiplier'],
    [fs, 'cpu_weight_multiplier'],
    [fs, 'disk_weight_multiplier'],
    [fs, 'io_ops_weight_multiplier'],
    [fs, 'pci_weight_multiplier'],
    [fs, 'soft_affinity_weight_multiplier'],
    [fs, 'soft_anti_affinity_weight_multiplier'],
    [fs, 'build_failure_weight_multiplier'],
    [fs, 'cross_cell_move_weight_multiplier'],
    ...(epoxy
      ? ([
          [fs, 'hypervisor_version_weight_multiplier'],
          [fs, 'num_instances_weight_multiplier'],
          [fs, 'image_props_weight_multiplier'],
          ['placement', 'max_allocation_candidates'],
        ] as Array<[string, keyof SchedulerConfig]>)
      : []),
    [fs, 'max_io_ops_per_host'],
    [fs, 'max_instances_per_host'],
    ['scheduler', 'max_placement_results'],
    ['DEFAULT', 'service_down_time'],
    ['DEFAULT', 'cpu_allocation_ratio'],
    ['DEFAULT', 'ram_allocation_ratio'],
    ['DEFAULT', 'disk_allocation_ratio'],
    ['DEFAULT', 'initial_cpu_allocation_ratio'],
    ['DEFAULT', 'initial_ram_allocation_ratio'],
    ['DEFAULT', 'initial_disk_allocation_ratio'],
  ]
  for (const [sec, opt] of nums) {
    const v = get(sec, opt as string)
    if (v !== undefined && v !== '' && Number.isFinite(Number(v))) (out as Record<string, unknown>)[opt] = Number(v)
  }
  const bools: Array<[string, keyof SchedulerConfig]> = [
    [fs, 'shuffle_best_same_weighed_hosts'],
    [fs, 'restrict_isolated_hosts_to_isolated_images'],
    ['scheduler', 'limit_tenants_to_placement_aggregate'],
    ['scheduler', 'placement_aggregate_required_for_tenants'],
    ...(epoxy ? [] : ([['scheduler', 'query_placement_for_availability_zone']] as Array<[string, keyof SchedulerConfig]>)),
    ['scheduler', 'query_placement_for_image_type_support'],
    ['scheduler', 'enable_isolated_aggregate_filtering'],
    ['scheduler', 'image_metadata_prefilter'],
    ['compute', 'packing_host_numa_cells_allocation_strategy'],
  ]
  for (const [sec, opt] of bools) {
    const v = get(sec, opt as string)
    if (v !== undefined) (out as Record<string, unknown>)[opt] = bool(v)
  }
  if (epoxy) {
    const setting = get(fs, 'image_props_weight_setting')
    if (setting !== undefined) out.image_props_weight_setting = parseWeightSetting(list(setting))
    const strategy = get('placement', 'allocation_candidates_generation_strategy')
    if (strategy !== undefined) {
      // oslo.config refuses to start placement on a value outside the option's choices.
      if (strategy !== 'depth-first' && strategy !== 'breadth-first')
        throw new ConfigError(`[placement] allocation_candidates_generation_strategy must be depth-first or breadth-first, got "${strategy}"`)
      out.allocation_candidates_generation_strategy = strategy
    }
  }
  const arch = get(fs, 'image_properties_default_architecture')
  if (arch) out.image_properties_default_architecture = arch
  const alias = sections.pci?.alias
  const aliases = Array.isArray(alias) ? alias : alias === undefined ? [] : [alias]
  for (const a of aliases) {
    try {
      const parsed = JSON.parse(String(a)) as PciAlias
      if (parsed && typeof parsed.name === 'string') out.pci_alias = [...out.pci_alias, parsed]
    } catch {
      // oslo would refuse to start with a bad alias; a simulation keeps going without it.
    }
  }
  return out
}
