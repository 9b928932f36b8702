/**
 * Runs nova's and placement's own code (Zed) with /usr/bin/python3 for the comparison suites, and
 * nova 31 / placement 13 (2025.1), nova 33 / placement 15 (2026.1) and nova 34 / placement 16
 * (2026.2) inside the chroots test/releases/release-chroot.sh builds (trixie, forky, sid).
 *
 * The suites run whenever that python can import nova and placement. Otherwise they are skipped
 * with one line on stderr, except under CI=true, where a missing nova is an error (CI installs
 * python3-nova and python3-placement). CLOUDCTL_COMPARE_NOVA=0 skips them on purpose;
 * CLOUDCTL_COMPARE_NOVA=1 insists on them, like CI.
 */
import {execFileSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {createRng} from '../../src/lib/engine/rng.js'

export const PYTHON = process.env.CLOUDCTL_PYTHON ?? '/usr/bin/python3'
const DRIVER = fileURLToPath(new URL('nova_driver.py', import.meta.url))

function novaImportError(): string | null {
  try {
    execFileSync(PYTHON, ['-c', 'import nova.virt.hardware, nova.scheduler.utils, placement.objects.allocation_candidate'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 120_000,
    })
    return null
  } catch (error) {
    const e = error as {code?: string; stderr?: Buffer}
    if (e.code === 'ENOENT') return `${PYTHON} not found`
    const last = String(e.stderr ?? '')
      .trim()
      .split('\n')
      .pop()
    return last || 'import failed'
  }
}

function decide(): boolean {
  const wanted = process.env.CLOUDCTL_COMPARE_NOVA
  if (wanted === '0') return false
  const why = novaImportError()
  if (why === null) return true
  if (process.env.CI === 'true' || wanted === '1') {
    throw new Error(
      `test/compare-nova: ${PYTHON} cannot import nova/placement (${why}); CI needs python3-nova and python3-placement (CLOUDCTL_COMPARE_NOVA=0 skips these suites)`,
    )
  }
  // Each test file loads this module in its own worker: the first one of this run says it, once.
  try {
    closeSync(openSync(join(tmpdir(), `cloudctl-compare-nova-skipped-${process.ppid}`), 'wx'))
    process.stderr.write(
      `test/compare-nova skipped: ${PYTHON} cannot import nova/placement (${why}); install python3-nova python3-placement to compare with the real code\n`,
    )
  } catch {
    // already said in this run
  }
  return false
}

export const COMPARE = decide()

export type CompareRelease = 'zed' | '2025.1' | '2026.1' | '2026.2'
type ChrootRelease = Exclude<CompareRelease, 'zed'>

export const EPOXY_CHROOT = process.env.CLOUDCTL_EPOXY_CHROOT || '/srv/trixie'
/** Each newer release's chroot and Debian suite (release-chroot.sh reads the same variables). */
const CHROOTS: Record<ChrootRelease, {root: string; suite: string}> = {
  '2025.1': {root: EPOXY_CHROOT, suite: 'trixie'},
  '2026.1': {root: process.env.CLOUDCTL_FORKY_CHROOT || '/srv/forky', suite: 'forky'},
  '2026.2': {root: process.env.CLOUDCTL_SID_CHROOT || '/srv/sid', suite: 'sid'},
}
const CHROOT_SCRIPT = fileURLToPath(new URL('../releases/release-chroot.sh', import.meta.url))

function chrootOf(release: ChrootRelease): string {
  return CHROOTS[release].root
}

/**
 * Whether a newer release's replays run: they need its chroot with nova's test packages (the
 * script's --check) and root to enter it. CI builds the chroots first, so there a missing one is an
 * error; elsewhere the suites say once why they are skipped.
 */
function decideChroot(release: ChrootRelease): boolean {
  if (!COMPARE) return false
  const {root, suite} = CHROOTS[release]
  let why: string | null = null
  if (typeof process.getuid === 'function' && process.getuid() !== 0) why = 'not root (chroot needs it)'
  else {
    try {
      execFileSync('bash', [CHROOT_SCRIPT, suite, '--check'], {stdio: 'ignore'})
    } catch {
      why = `no ready chroot at ${root} (bash test/releases/release-chroot.sh ${suite} builds it, as root, in ~7 min)`
    }
  }
  if (why === null) return true
  if (process.env.CI === 'true' || process.env.CLOUDCTL_COMPARE_NOVA === '1') throw new Error(`test/compare-nova: nova ${release} replays cannot run: ${why}`)
  try {
    closeSync(openSync(join(tmpdir(), `cloudctl-compare-${suite}-skipped-${process.ppid}`), 'wx'))
    process.stderr.write(`test/compare-nova ${release} replays skipped: ${why}\n`)
  } catch {
    // already said in this run
  }
  return false
}

/** The releases the replays run against here: Zed always (when COMPARE), each newer one with its chroot. */
export const COMPARE_RELEASES: CompareRelease[] = COMPARE ? ['zed', ...(Object.keys(CHROOTS) as ChrootRelease[]).filter(decideChroot)] : []

/** Runs nova_driver.py on one release's nova: the host's (Zed) or, copied into it, the release's chroot's. */
export function runNova<T>(doc: Record<string, unknown>, release: CompareRelease = 'zed'): T {
  if (release === 'zed') {
    const out = execFileSync(PYTHON, [DRIVER], {input: JSON.stringify(doc), maxBuffer: 1 << 28, stdio: ['pipe', 'pipe', 'pipe']})
    return JSON.parse(out.toString('utf8')) as T
  }
  const root = chrootOf(release)
  const dir = mkdtempSync(join(root, 'tmp', 'cloudctl-driver-'))
  try {
    copyFileSync(DRIVER, join(dir, 'nova_driver.py'))
    const inside = dir.slice(root.replace(/\/+$/, '').length)
    const out = execFileSync('chroot', [root, '/usr/bin/python3', `${inside}/nova_driver.py`], {
      input: JSON.stringify(doc),
      maxBuffer: 1 << 28,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    return JSON.parse(out.toString('utf8')) as T
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

/** The engine's seeded generator: the cases are random but the same on every run. */
export function seeded(seed: number): {int(n: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean} {
  const rng = createRng(seed)
  return {
    int: (n) => rng.int(n),
    pick: (xs) => xs[rng.int(xs.length)] as (typeof xs)[number],
    chance: (p) => rng.next() < p,
  }
}

const CACHE = fileURLToPath(new URL('.cache/', import.meta.url))

function packageVersion(name: string, release: CompareRelease = 'zed'): string | null {
  const admin = release === 'zed' ? [] : [`--admindir=${chrootOf(release)}/var/lib/dpkg`]
  try {
    return (
      execFileSync('dpkg-query', [...admin, '-W', '-f=${Version}', name], {stdio: ['ignore', 'pipe', 'ignore']})
        .toString('utf8')
        .trim() || null
    )
  } catch {
    return null
  }
}

/**
 * Runs a recorder (a Python script that runs nova's or placement's own tests with the functions
 * under test wrapped) and returns its JSON lines. Recordings are cached in test/compare-nova/.cache
 * (gitignored), keyed by the python3-nova and python3-placement versions and the recorders' own
 * text, so a second run replays without running the tests again; without dpkg there is no cache.
 * With a newer release the recorder and its sources are copied into that release's chroot and run
 * by its python (nova 31, 33 or 34); those recordings are cached under their own name.
 */
export function recorded<T>(recorder: string, sources: string[], env: Record<string, string> = {}, release: CompareRelease = 'zed'): T[] {
  const versions = [packageVersion('python3-nova', release), packageVersion('python3-placement', release)]
  const hash = createHash('sha256')
  const root = release === 'zed' ? undefined : chrootOf(release)
  hash.update(root === undefined ? PYTHON : `${root}:/usr/bin/python3`)
  for (const v of versions) hash.update(`\0${v ?? ''}`)
  for (const f of [recorder, ...sources]) hash.update(`\0${readFileSync(fileURLToPath(new URL(f, import.meta.url)), 'utf8')}`)
  for (const [k, v] of Object.entries(env).sort()) hash.update(`\0${k}=${v}`)
  const key = `${recorder.replace(/\.py$/, '')}${release === 'zed' ? '' : `-${release}`}-${hash.digest('hex').slice(0, 16)}.jsonl`
  const cacheable = versions.every((v) => v !== null) && process.env.CLOUDCTL_COMPARE_CACHE !== '0'
  const cached = join(CACHE, key)
  if (cacheable && existsSync(cached)) return parseLines<T>(readFileSync(cached, 'utf8'))
  const dir = mkdtempSync(join(root === undefined ? tmpdir() : join(root, 'tmp'), 'cloudctl-rec-'))
  try {
    const file = join(dir, 'cases.jsonl')
    if (root === undefined) {
      execFileSync(PYTHON, [fileURLToPath(new URL(recorder, import.meta.url))], {
        env: {...process.env, ...env, RECORD: file},
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 1 << 26,
        timeout: 600_000,
      })
    } else {
      for (const f of [recorder, ...sources]) copyFileSync(fileURLToPath(new URL(f, import.meta.url)), join(dir, f))
      const inside = dir.slice(root.replace(/\/+$/, '').length)
      const vars = Object.entries({...env, RECORD: `${inside}/cases.jsonl`}).map(([k, v]) => `${k}=${v}`)
      execFileSync('chroot', [root, 'env', ...vars, '/usr/bin/python3', `${inside}/${recorder}`], {
        stdio: ['ignore', 'pipe', 'pipe'],
        maxBuffer: 1 << 26,
        timeout: 600_000,
      })
    }
    const text = readFileSync(file, 'utf8')
    if (cacheable) {
      mkdirSync(CACHE, {recursive: true})
      // write then rename: a concurrent run never reads half a file
      const tmp = join(CACHE, `${key}.${process.pid}.tmp`)
      writeFileSync(tmp, text)
      renameSync(tmp, cached)
      // recordings of an older nova or recorder are never read again
      // (the same recorder's recordings of another release are kept: Zed's name has no release in it)
      const prefix = key.slice(0, key.lastIndexOf('-') + 1)
      const same = (f: string) => f.startsWith(prefix) && /^[0-9a-f]{16}\.jsonl$/.test(f.slice(prefix.length))
      for (const f of readdirSync(CACHE)) if (same(f) && f !== key) rmSync(join(CACHE, f), {force: true})
    }
    return parseLines<T>(text)
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

function parseLines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T)
}
