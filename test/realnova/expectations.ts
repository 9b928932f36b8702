import {COMPUTE_SCENARIOS} from './expectations-computes.js'
import {NESTED_SCENARIOS} from './expectations-nested.js'
import type {PlayDriver, RealNovaRelease} from './support.js'

/**
 * What cloudctl must report on each scenario real nova plays (driver.py's test_<scenario>), for every
 * release that plays them: test/realnova/audit.test.ts (Zed, the host's nova 26) and
 * test/releases/realnova*.test.ts (2025.1, 2026.1, 2026.2: nova 31, 33, 34 in their chroots) read this one table.
 */

export interface Scenario {
  /** The exact error/warning codes (info findings are not incidents). */
  codes: string[]
  /** Repairs, in order, each run with --apply --yes; [] when nothing is to repair. */
  repairs: string[][]
  /** Error/warning codes left after the repairs (what needs an operator's nova command). */
  after?: string[]
  /**
   * The play booted a server where the fault blocks it and the real scheduler answered NoValidHost
   * (notes.blocked_boot): cloudctl's simulation on the same rows must refuse it too, and place it
   * there once the repairs ran.
   */
  blockedBoot?: true
  /**
   * The play left an instance live in two cells (notes.duplicate): real `nova-manage cell_v2
   * verify_instance` names the cell the API uses, before and after the repairs.
   */
  duplicate?: {before: string; after: string}
  /**
   * The release's nova refused the play's operation (driver.py records the refusal in
   * notes[note].refused): the message must match, and the cloud is what that refusal leaves.
   */
  refused?: {note: string; message: RegExp}
  /** The play module (factory.py DRIVERS) when it is not driver.py. */
  driver?: PlayDriver
  /**
   * Leaks the play planted (a consumer named in its notes): the findings of `code` for that consumer
   * must hold exactly its allocation rows on the provider tree rooted at `tree` (the compute node and
   * every child under it) and, with `sharing`, on the sharing providers; `children` is how many child
   * providers that leak holds. The repairs must remove every such row, bumping the generation of every
   * provider they held, and `repair undo` must then restore every table exactly.
   */
  planted?: Array<{
    note: string
    key: string
    code: string
    tree: string
    sharing: boolean
    children: number
    /**
     * How many providers of this leak real `nova-manage placement audit` does not name (before the
     * repairs): it skips a consumer's rows on a provider holding only custom classes (not in its
     * NOVA_RCS list), e.g. a PCI device's child provider. Default 0.
     */
    manageBlind?: number
  }>
  /**
   * Where real nova-manage is wrong on this cloud after the repairs. `sharing`: `placement audit`
   * judges each provider by its root's compute node, so every sharing provider "can not be found" and
   * the allocations live servers and migrations in progress hold there are called orphaned.
   */
  manageWrong?: {
    sharing?: true
    /**
     * `heal_allocations --dry-run` does not answer "nothing to heal" (exit 4): its exit code and the
     * line it stops with (Zed refuses to heal, and so to look past, an instance with a vGPU request).
     */
    heal?: {exit: number; message: RegExp}
  }
}

export const SCENARIOS: Record<string, Scenario> = {
  healthy: {codes: [], repairs: []},
  in_flight: {codes: [], repairs: []},
  // The dead source's row still counts the evacuated instances: pinning.leaked and usage.node-drift
  // at info (its nova-compute is down and recomputes the row when it starts), repaired all the same.
  evacuated_host_down: {
    codes: ['allocation.evacuation-leftover'],
    repairs: [
      ['repair', 'leaks'],
      ['repair', 'pinning'],
      ['repair', 'usage'],
    ],
  },
  // The API deleted locally (rows and allocations); only the dead host's row is behind (info).
  deleted_while_down: {
    codes: [],
    repairs: [
      ['repair', 'pinning'],
      ['repair', 'usage'],
    ],
  },
  // Live servers still sit on the deleted service's host: the provider holds their allocations and
  // cloudctl refuses to drop them (nova-manage placement audit calls them orphaned: its compute node
  // is gone). The operator deletes or rebuilds those servers with nova first.
  service_deleted: {codes: ['provider.stale'], repairs: [['repair', 'providers']], after: ['provider.stale']},
  // The FQDN node's new provider is not in the host's placement aggregate (nova mirrors aggregates
  // on add_host only); the short-name provider stays with the allocations of the servers on node host3.
  // repair providers moves those servers to the host's live node (instances.node and allocations) and
  // removes the old provider; the live node's row then counts them as nova-compute's next periodic
  // would (usage and pins, --force: nova-compute is up).
  hostname_change: {
    codes: ['aggregate.missing-in-placement', 'provider.duplicate-name'],
    repairs: [
      ['repair', 'aggregates'],
      ['repair', 'providers'],
      ['repair', 'pinning', '--force'],
      ['repair', 'usage', '--force'],
    ],
  },
  // nova-compute is up and reporting (its periodic hung): the repairs need --force.
  // The play's pinned boot onto host2 got NoValidHost from the real scheduler (NUMATopologyFilter).
  pinned_leak: {
    codes: ['pinning.leaked', 'usage.node-drift'],
    repairs: [
      ['repair', 'pinning', '--force'],
      ['repair', 'usage', '--force'],
    ],
    blockedBoot: true,
  },
  usage_drift: {codes: ['usage.node-drift'], repairs: [['repair', 'usage', '--force']]},
  // Seed 004's other half: buried in cell0 (ERROR, NoValidHost) and ACTIVE in cell1, mapped to cell0.
  // map-instances points the mapping at the live copy and soft-deletes the cell0 one.
  cell0_duplicate: {codes: ['cell.instance-duplicate'], repairs: [['cells', 'map-instances']], duplicate: {before: 'cell0', after: 'cell1'}},
  ...COMPUTE_SCENARIOS,
}

/** Where a release's own nova plays a scenario differently, the whole expectation for it there and why. */
const RENAME_REFUSED: Scenario & {why: string} = {
  why: 'stable compute node uuids (nova 27+): nova-compute finds its node under another hypervisor hostname and refuses to start, so no node and no provider are made for the FQDN; host3 keeps its node and provider and only its service stops reporting',
  codes: [],
  repairs: [],
  refused: {note: 'rename', message: /Possible rename detected, refusing to start/},
}

const DIFFERENCES: Partial<Record<RealNovaRelease, Record<string, Scenario & {why: string}>>> = {
  '2025.1': {hostname_change: RENAME_REFUSED},
  // nova 33 and 34 refuse the renamed compute with the same log line (their plays' notes.rename)
  '2026.1': {hostname_change: RENAME_REFUSED},
  '2026.2': {hostname_change: RENAME_REFUSED},
}

/** Every scenario with what cloudctl must report on the clouds `release`'s own nova wrote. */
export function scenariosOf(release: RealNovaRelease): Record<string, Scenario> {
  return {...SCENARIOS, ...NESTED_SCENARIOS, ...DIFFERENCES[release]}
}
