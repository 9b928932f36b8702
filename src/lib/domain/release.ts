/**
 * Which nova / placement release wrote a database, from its alembic head and, for cell databases,
 * the newest `services.version` of a live service.
 *
 * A head names a range of releases, not one: a release that adds no migration keeps the previous
 * head (nova_api b30f573d3377 is the head of Yoga and Zed; nova 33 (2026.1) adds no migration to
 * any of the three databases, so its schemas are 2025.1's). The tables below were read from the
 * migration directories of nova 26 / placement 8 (Debian 12), nova 31 / placement 13 (Debian 13),
 * nova 33 / placement 15 (forky) and nova 34 / placement 16 (sid), each revision placed in the
 * release that first shipped it by the migration directories at nova's and placement's release
 * tags 27.0.0-30.0.0 / 9.0.0-12.0.0 (test/releases/source-schemas.test.ts makes those schemas); service versions are nova 34's SERVICE_VERSION_ALIASES. A
 * database's release is its head's range, narrowed by the service version when both agree; the
 * cloud's release is what every database agrees on.
 */

/**
 * Releases in order; the ones before 'zed' are only named to say that a schema is too old. 2025.2
 * (nova 32) is named because service versions 69-70 are its, though no Debian package carries it.
 */
export const RELEASE_ORDER = ['xena', 'yoga', 'zed', '2023.1', '2023.2', '2024.1', '2024.2', '2025.1', '2025.2', '2026.1', '2026.2'] as const
export type ReleaseName = (typeof RELEASE_ORDER)[number]

/** The oldest release whose schema cloudctl reads. */
export const OLDEST_SUPPORTED_RELEASE: ReleaseName = 'zed'
/**
 * The newest release cloudctl was verified against. A head it ends is also the head of any newer
 * release that adds no migration, so a range reaching it is named '<first> or later'.
 */
export const NEWEST_KNOWN_RELEASE: ReleaseName = '2026.2'

export type DatabaseKind = 'nova_api' | 'nova' | 'placement'

export interface ReleaseRange {
  first: ReleaseName
  last: ReleaseName
  /**
   * `last` is only the newest release cloudctl has read: a newer one that adds no migration keeps
   * the same head. Set on heads that reach NEWEST_KNOWN_RELEASE; a service version of known code
   * closes the range.
   */
  open?: true
}

const range = (first: ReleaseName, last: ReleaseName = first): ReleaseRange => (last === NEWEST_KNOWN_RELEASE ? {first, last, open: true} : {first, last})

/** alembic revision -> the releases whose `db sync` stops there (mid-release revisions included). */
const HEADS: Record<DatabaseKind, Record<string, ReleaseRange>> = {
  nova_api: {
    d67eeaabee36: range('xena'),
    // nova 27 (2023.1) adds no API migration; cdeec0c85668 came with nova 28 (2023.2)
    b30f573d3377: range('yoga', '2023.1'),
    cdeec0c85668: range('2023.2', '2026.2'),
  },
  nova: {
    '8f2f1571d55b': range('xena'),
    '16f1fbcab42b': range('yoga'),
    ccb0fa1a2252: range('zed'),
    '960aac0e09ea': range('2023.1'),
    // 1b91788ec3a6 and 1acf2c98e646 both came with nova 28; d60bddf7a903 with nova 31 (mid-release
    // revisions: a database stops there only during that release's db sync)
    '1b91788ec3a6': range('2023.2'),
    '1acf2c98e646': range('2023.2'),
    // nova 30 (2024.2) adds no cell migration
    '13863f4e1612': range('2024.1', '2024.2'),
    d60bddf7a903: range('2025.1'),
    // nova 32 and nova 33 add no cell migration; nova 34 adds two migrations indexes
    '2903cd72dc14': range('2025.1', '2026.1'),
    ab450ba04102: range('2026.2'),
  },
  placement: {
    // Stein and Train revisions: older than any release cloudctl reads.
    b4ed3a175331: range('xena'),
    '611cd6dffd7b': range('xena'),
    b5c396305c25: range('xena'),
    // placement 9 (2023.1) adds none; a082b8bb98d0 came with placement 10 (2023.2)
    '422ece571366': range('xena', '2023.1'),
    a082b8bb98d0: range('2023.2', '2026.2'),
  },
}

/** Revisions older than Xena's: their databases predate every release in RELEASE_ORDER. */
const ANCIENT: Record<DatabaseKind, Set<string>> = {
  nova_api: new Set(),
  nova: new Set(),
  placement: new Set(['b4ed3a175331', '611cd6dffd7b', 'b5c396305c25']),
}

/** A release range known to be the code's (never open). */
const closed = (first: ReleaseName, last: ReleaseName = first): ReleaseRange => ({first, last})

/**
 * services.version of the code of each release (nova 34's SERVICE_VERSION_ALIASES: 62-64 = Zed,
 * Flamingo 70, Gazpacho 72, Hibiscus 74). Newer than 74: a release cloudctl has not read.
 */
function serviceVersionRange(v: number): ReleaseRange | undefined {
  if (v <= 57) return closed('xena')
  if (v <= 61) return closed('yoga')
  if (v <= 64) return closed('zed')
  if (v <= 66) return closed('2023.1', '2024.1')
  if (v === 67) return closed('2024.2')
  if (v === 68) return closed('2025.1')
  if (v <= 70) return closed('2025.2')
  if (v <= 72) return closed('2026.1')
  if (v <= 74) return closed('2026.2')
  return undefined
}

const idx = (r: ReleaseName): number => RELEASE_ORDER.indexOf(r)

export function releaseAtLeast(r: ReleaseName, min: ReleaseName): boolean {
  return idx(r) >= idx(min)
}

function intersect(a: ReleaseRange, b: ReleaseRange): ReleaseRange | undefined {
  const first = idx(a.first) >= idx(b.first) ? a.first : b.first
  const last = idx(a.last) <= idx(b.last) ? a.last : b.last
  if (idx(first) > idx(last)) return undefined
  // open only when every side ending there is open (a closed one knows the code)
  const open = [a, b].every((x) => x.last !== last || x.open === true)
  return open ? {first, last, open} : {first, last}
}

/** 'zed', '2025.1', '2024.x' (two releases of one year), 'yoga-zed', '2025.1 or later'. */
export function rangeName(r: ReleaseRange): string {
  if (r.open === true) return `${r.first} or later`
  if (r.first === r.last) return r.first
  const year = (n: string): string | undefined => /^(\d{4})\./.exec(n)?.[1]
  if (year(r.first) !== undefined && year(r.first) === year(r.last)) return `${year(r.first)}.x`
  return `${r.first}-${r.last}`
}

/** What one database says about its release (stored in snapshots, shown by the commands). */
export interface DatabaseRelease {
  /** alembic_version.version_num; null when the database has no alembic_version table. */
  alembic_version: string | null
  /** Newest services.version of a live service (cell databases with services only). */
  service_version?: number | null
  /** First and last release this database may be; absent when unknown. */
  first?: ReleaseName
  last?: ReleaseName
  /** `last` may be a newer release cloudctl has not read (ReleaseRange.open). */
  open?: true
  /** 'zed', '2025.1', '2024.x', '2025.1 or later', 'unknown (alembic 1234abcd)', 'older than Xena (sqlalchemy-migrate)'. */
  name: string
  /** True when the schema is older than OLDEST_SUPPORTED_RELEASE. */
  too_old?: boolean
}

/**
 * The release of one database from what it holds. `legacyMigrate`: the database has a
 * migrate_version table (sqlalchemy-migrate, before Xena) and no alembic_version.
 */
export function databaseRelease(
  kind: DatabaseKind,
  alembic: string | null,
  opts: {legacyMigrate?: boolean; serviceVersion?: number | null} = {},
): DatabaseRelease {
  const out: DatabaseRelease = {alembic_version: alembic, name: 'unknown'}
  if (opts.serviceVersion !== undefined) out.service_version = opts.serviceVersion
  if (alembic === null) {
    if (opts.legacyMigrate) {
      out.name = 'older than Xena (sqlalchemy-migrate schema)'
      out.too_old = true
    } else {
      out.name = 'unknown (no alembic_version)'
    }
    return out
  }
  if (ANCIENT[kind].has(alembic)) {
    out.name = `older than Xena (alembic ${alembic})`
    out.too_old = true
    return out
  }
  const head = HEADS[kind][alembic]
  if (head === undefined) {
    out.name = `unknown (alembic ${alembic}, newer than ${NEWEST_KNOWN_RELEASE}?)`
    return out
  }
  let r = head
  const sv = opts.serviceVersion == null ? undefined : serviceVersionRange(opts.serviceVersion)
  // During a rolling upgrade the schema runs ahead of the services: it wins when they disagree.
  if (sv !== undefined) r = intersect(r, sv) ?? r
  out.first = r.first
  out.last = r.last
  if (r.open) out.open = true
  out.name = rangeName(r)
  if (!releaseAtLeast(r.last, OLDEST_SUPPORTED_RELEASE)) out.too_old = true
  return out
}

/** The release of the whole cloud, as stored in a snapshot's header. */
export interface SnapshotRelease {
  /** What every database agrees on; 'unknown' or 'mixed (...)' otherwise. */
  name: string
  first?: ReleaseName
  last?: ReleaseName
  open?: true
  nova_api: DatabaseRelease
  placement: DatabaseRelease
  /** By cell uuid; cells that could not be read are absent. */
  cells: Record<string, DatabaseRelease>
}

/**
 * nova's databases decide (nova_api and the cells); placement narrows when it agrees, as it is
 * upgraded on its own schedule.
 */
export function cloudRelease(novaApi: DatabaseRelease, placement: DatabaseRelease, cells: Record<string, DatabaseRelease>): SnapshotRelease {
  const out: SnapshotRelease = {name: 'unknown', nova_api: novaApi, placement, cells}
  const known = (d: DatabaseRelease): ReleaseRange | undefined =>
    d.first !== undefined && d.last !== undefined ? {first: d.first, last: d.last, ...(d.open ? {open: true as const} : {})} : undefined
  const nova = [novaApi, ...Object.values(cells)].map(known).filter((r): r is ReleaseRange => r !== undefined)
  if (nova.length === 0) return out
  let r: ReleaseRange | undefined = nova[0]
  for (const x of nova.slice(1)) r = r === undefined ? undefined : intersect(r, x)
  if (r === undefined) {
    // the oldest a database can be at most, and the newest another must at least be (a head that
    // spans releases, like nova_api's, names neither end)
    const lo = nova.reduce((a, b) => (idx(b.last) < idx(a.last) ? b : a))
    const hi = nova.reduce((a, b) => (idx(b.first) > idx(a.first) ? b : a))
    out.name = `mixed (${lo.last} to ${hi.first})`
    return out
  }
  const p = known(placement)
  if (p !== undefined) r = intersect(r, p) ?? r
  out.first = r.first
  out.last = r.last
  if (r.open) out.open = true
  out.name = rangeName(r)
  return out
}

/** A short label for one database: '2025.1 (alembic 2903cd72dc14)'. */
export function databaseReleaseLabel(d: DatabaseRelease | undefined): string {
  if (d === undefined) return 'not recorded'
  return d.alembic_version !== null && !d.name.includes(d.alembic_version) ? `${d.name} (alembic ${d.alembic_version})` : d.name
}

/** The releases whose scheduler the engine simulates (src/lib/engine/config.ts ENGINE_RELEASES). */
export type SimulatedRelease = 'zed' | '2025.1' | '2026.1' | '2026.2'
const SIMULATED: readonly SimulatedRelease[] = ['zed', '2025.1', '2026.1', '2026.2']

export interface SimulatedReleaseChoice {
  release: SimulatedRelease
  /** How it was chosen, for the output: 'detected', 'given', or why another release stands in. */
  note: string
}

/**
 * Which release's scheduler defaults a simulation of this snapshot uses. A snapshot that is one
 * simulated release by every database gets that release's; Zed and older get Zed's. A range gets
 * the oldest release it may be (2025.1-2026.1, a cell whose services carry no version: 2025.1's),
 * and 2025.2, whose code cloudctl has not read, 2025.1's; both are said in the note. Between Zed
 * and 2025.1 (2023.1-2024.2, or a range reaching both) cloudctl has read neither release's code, so
 * it takes Zed's, which those releases started from, and says so; a snapshot without a release
 * (generated clouds, files from older cloudctl) is simulated as Zed, as before releases were told apart.
 */
export function simulatedRelease(snapshot: SnapshotRelease | undefined, given?: SimulatedRelease): SimulatedReleaseChoice {
  if (given !== undefined) return {release: given, note: `--release ${given}`}
  if (snapshot?.first === undefined || snapshot.last === undefined)
    return {release: 'zed', note: `release not recorded in the snapshot (${snapshot?.name ?? 'no release header'}): Zed's defaults`}
  const first = snapshot.first
  if (releaseAtLeast(first, '2025.1')) {
    // the newest simulated release not newer than the oldest the snapshot may be
    const release = [...SIMULATED].reverse().find((r) => releaseAtLeast(first, r)) as SimulatedRelease
    if (release === first && (first === snapshot.last || snapshot.open === true)) return {release, note: `detected ${snapshot.name}`}
    const why = release === first ? 'the oldest release it may be' : `cloudctl has not read nova's ${first} scheduler`
    return {release, note: `detected ${snapshot.name}; ${release}'s defaults (${why}; --release picks another)`}
  }
  if (!releaseAtLeast(snapshot.last, '2023.1')) return {release: 'zed', note: `detected ${snapshot.name}`}
  return {
    release: 'zed',
    note: `detected ${snapshot.name}; cloudctl knows the scheduler of Zed and 2025.1 and later only, so Zed's defaults (pass --release 2025.1 for 2025.1's)`,
  }
}
