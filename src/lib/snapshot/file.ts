/**
 * Snapshot files: JSON (canonical: one row per line), YAML, or the columnar layout (columnar.ts,
 * `.cloudctl`: the fastest to load), each optionally gzip-compressed. Readers go by the content,
 * not the name: any of them is read whatever it is called.
 *
 * A cloud of 300k instances and 1M allocations makes a JSON text larger than V8's longest string,
 * so cloudctl writes JSON with one row per line and reads that layout line by line. Any other valid
 * JSON or YAML document (hand-written, pretty-printed, converted) is still accepted and read whole.
 */
import {once} from 'node:events'
import {createReadStream, promises as fsp} from 'node:fs'
import {Readable, type Writable} from 'node:stream'
import {promisify} from 'node:util'
import {constants as zlibConstants, createGunzip, createGzip, gunzip, gunzipSync} from 'node:zlib'

import {NOVA_API_TABLES, NOVA_TABLES, PLACEMENT_TABLES, type Snapshot} from '../domain/snapshot.js'
import {ConfigError, NotFoundError, SnapshotFormatError} from '../errors.js'
import {errnoText, regularFileTarget, replaceFile} from '../util/atomic-file.js'
import {yamlLib} from '../util/lazy-yaml.js'
import {jsonErrorText, yamlErrorText} from '../util/parse-errors.js'
import {redact} from '../util/redact.js'
import {NotCanonical, readCanonical} from './canonical-reader.js'
import {decodeColumnar} from './columnar-read.js'
import {COLUMNAR_MAGIC, encodeColumnar, isColumnar} from './columnar.js'
import {validateSnapshotShape} from './schema.js'

export type SnapshotFormat = 'json' | 'yaml' | 'columnar'

export function formatFromPath(path: string): {format: SnapshotFormat; gzip: boolean} {
  const gzip = /\.gz$/i.test(path)
  const base = path.replace(/\.gz$/i, '')
  return {format: /\.ya?ml$/i.test(base) ? 'yaml' : /\.cloudctl$/i.test(base) ? 'columnar' : 'json', gzip}
}

/** Never let a password reach a file, whatever the source forgot. */
export function redactSnapshot(s: Snapshot): Snapshot {
  return {
    ...s,
    source: {
      ...s.source,
      description: redact(s.source.description),
      api_db: redact(s.source.api_db),
      placement_db: redact(s.source.placement_db),
    },
    cells: s.cells.map((c) => ({
      ...c,
      database_connection: redact(c.database_connection),
      transport_url: redact(c.transport_url),
      ...(c.error === undefined ? {} : {error: redact(c.error)}),
    })),
  }
}

const SECTIONS: Array<['nova_api' | 'nova' | 'placement', readonly string[]]> = [
  ['nova_api', NOVA_API_TABLES],
  ['nova', NOVA_TABLES],
  ['placement', PLACEMENT_TABLES],
]

async function writeAll(out: Writable, chunks: Iterable<string>): Promise<void> {
  let buf = ''
  for (const chunk of chunks) {
    buf += chunk
    if (buf.length >= 1 << 20) {
      if (!out.write(buf)) await once(out, 'drain')
      buf = ''
    }
  }
  if (buf) out.write(buf)
}

async function writeBuffers(out: Writable, parts: Buffer[]): Promise<void> {
  for (const part of parts) if (part.length > 0 && !out.write(part)) await once(out, 'drain')
}

/** The canonical JSON layout, as a sequence of text chunks. */
export function* canonicalJson(s: Snapshot): Generator<string> {
  const header = JSON.stringify({
    format_version: s.format_version,
    captured_at: s.captured_at,
    source: s.source,
    ...(s.release === undefined ? {} : {release: s.release}),
  })
  yield `${header.slice(0, -1)},\n`
  yield* jsonArray('cells', s.cells as unknown[], ',')
  for (let si = 0; si < SECTIONS.length; si++) {
    const [section, tables] = SECTIONS[si]
    yield `"${section}":{\n`
    const present = tables.filter((t) => (s[section] as unknown as Record<string, unknown[] | undefined>)[t] !== undefined)
    for (let ti = 0; ti < present.length; ti++) {
      const rows = (s[section] as unknown as Record<string, unknown[]>)[present[ti]]
      yield* jsonArray(present[ti], rows, ti < present.length - 1 ? ',' : '')
    }
    yield si < SECTIONS.length - 1 ? '},\n' : '}\n'
  }
  yield '}\n'
}

function* jsonArray(name: string, rows: unknown[], trailer: string): Generator<string> {
  if (rows.length === 0) {
    yield `"${name}":[]${trailer}\n`
    return
  }
  yield `"${name}":[\n`
  for (let i = 0; i < rows.length; i++) yield `${JSON.stringify(rows[i])}${i < rows.length - 1 ? ',' : ''}\n`
  yield `]${trailer}\n`
}

/** What `-o PATH` names, checked before anything is captured or written. */
export type SnapshotTarget = {kind: 'stdout'} | {kind: 'file'; path: string; shown: string}

function notWritable(path: string, why: string): ConfigError {
  return new ConfigError(
    `cannot write the snapshot to ${path}: ${why}`,
    'Name a regular file in a writable directory (e.g. -o snap.json.gz), or -o - for stdout.',
    'SnapshotTargetError',
  )
}

/**
 * Snapshots are written to PATH.tmp-PID and renamed over PATH, so that a reader never sees half a
 * file; `-` is stdout. Which targets are refused: regularFileTarget (util/atomic-file.ts).
 */
export async function resolveSnapshotTarget(path: string): Promise<SnapshotTarget> {
  if (path === '-') return {kind: 'stdout'}
  const real = await regularFileTarget(path, (why) => notWritable(path === '' ? '""' : path, why))
  return {kind: 'file', path: real, shown: path}
}

/** Writes to a file (atomically, see resolveSnapshotTarget) or, for `-`, to stdout (canonical JSON). */
export async function writeSnapshotFile(snapshot: Snapshot, path: string, stdout: Writable = process.stdout): Promise<void> {
  const target = await resolveSnapshotTarget(path)
  const safe = redactSnapshot(snapshot)
  if (target.kind === 'stdout') {
    // A closed pipe (| head) reports EPIPE as an event, not as a throw from write().
    let failed: Error | undefined
    const onError = (error: Error) => {
      failed = error
    }
    stdout.on('error', onError)
    try {
      await writeAll(stdout, canonicalJson(safe))
      await new Promise<void>((resolve) => {
        stdout.write('', () => resolve())
      })
    } finally {
      stdout.off('error', onError)
    }
    if (failed) throw notWritable('stdout', errnoText(failed))
    return
  }
  const {format, gzip} = formatFromPath(target.path)
  // The one atomic writer (util/atomic-file.ts), as the metrics file: temporary file, fsync, rename,
  // removed on Ctrl-C or SIGTERM. 0600: a snapshot holds every host, instance and project of the
  // cloud; a file it replaces keeps its own mode.
  try {
    await replaceFile(target.path, 0o600, async (file) => {
      // Columnar files are small and meant to load fast: the cheapest compression level costs little in size.
      const out: Writable = gzip ? createGzip({level: format === 'columnar' ? 1 : 6}) : file
      if (gzip) out.pipe(file)
      if (format === 'yaml') await writeAll(out, [yamlLib().stringify(safe, {lineWidth: 0, aliasDuplicateObjects: false})])
      else if (format === 'columnar') await writeBuffers(out, encodeColumnar(safe))
      else await writeAll(out, canonicalJson(safe))
      out.end()
      // Through the pipe, gzip ends the file when its last block is written.
      if (gzip && !file.writableFinished) await once(file, 'finish')
    })
  } catch (error) {
    throw (error as NodeJS.ErrnoException).code ? notWritable(target.shown, errnoText(error)) : error
  }
}

// ---------------------------------------------------------------- reading

/** Whether the file is gzip-compressed, and whether its (inflated) content is the columnar layout. */
async function sniff(path: string): Promise<{gz: boolean; columnar: boolean}> {
  const fh = await fsp.open(path, 'r')
  try {
    const {buffer, bytesRead} = await fh.read(Buffer.alloc(1 << 12), 0, 1 << 12, 0)
    const head = buffer.subarray(0, bytesRead)
    const gz = bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b
    if (!gz) return {gz, columnar: isColumnar(head)}
    let inflated: Buffer
    try {
      // A partial inflate of the first block is enough to see the magic; a corrupt stream is reported by the full read.
      inflated = gunzipSync(head, {finishFlush: zlibConstants.Z_SYNC_FLUSH})
    } catch {
      inflated = Buffer.alloc(0)
    }
    return {gz, columnar: isColumnar(inflated.subarray(0, COLUMNAR_MAGIC.length))}
  } finally {
    await fh.close()
  }
}

async function readColumnar(path: string, gz: boolean): Promise<unknown> {
  let buf: Buffer
  try {
    buf = await fsp.readFile(path)
    // Inflating runs on libuv's thread pool, off the main thread.
    if (gz) buf = await promisify(gunzip)(buf)
  } catch (error) {
    throw wrapIo(error, path)
  }
  return decodeColumnar(buf, path)
}

/**
 * Bytes read (and inflated) per chunk. Kept under V8's 128 KiB limit for young-generation objects:
 * with 1 MiB chunks every chunk string and batch text went to the large-object space, which only a
 * full collection frees: +100 MB peak RSS and +1.5 s of CPU on a 700 MB file.
 */
const CHUNK = 1 << 16

function parseWhole(text: string, path: string): unknown {
  const {format} = formatFromPath(path)
  const trimmed = text.trimStart()
  if (format === 'json' || trimmed.startsWith('{')) {
    try {
      return JSON.parse(text)
    } catch (error) {
      // Not V8's message: it quotes the text, and the file named may be any file (a nova.conf).
      if (format === 'json') throw new SnapshotFormatError(`${path}: ${jsonErrorText(error, text)}`)
    }
  }
  const docs = yamlLib().parseAllDocuments(text)
  const first = Array.isArray(docs) ? docs[0] : docs
  if (!first) throw new SnapshotFormatError(`${path}: the file is empty`)
  if (first.errors.length > 0) {
    const e = first.errors[0]
    throw new SnapshotFormatError(`${path}: not valid YAML: ${yamlErrorText(e)}`)
  }
  return first.toJS({maxAliasCount: -1})
}

export interface ReadOptions {
  /** Skip the per-row validation (trusted files, benchmarks). */
  skipValidation?: boolean
}

/** Read and validate a snapshot file; every problem is a SnapshotFormatError (exit 2). */
export async function readSnapshotFile(path: string, opts: ReadOptions = {}): Promise<Snapshot> {
  let stat
  try {
    stat = await fsp.stat(path)
  } catch {
    throw new NotFoundError(`snapshot file ${path} does not exist`, 'Check the path, or capture one with `cloudctl snapshot capture -o FILE`.')
  }
  if (!stat.isFile())
    throw new NotFoundError(
      `${path} is not a file`,
      stat.isDirectory()
        ? 'It is a directory: give the snapshot file itself (`cloudctl snapshot capture -o FILE` writes one).'
        : 'Give a regular snapshot file (JSON, YAML or gzip, as `cloudctl snapshot capture -o FILE` writes), not a device, FIFO or socket.',
    )
  const {gz, columnar} = await sniff(path)
  const open = (): Readable =>
    gz ? createReadStream(path, {highWaterMark: CHUNK}).pipe(createGunzip({chunkSize: CHUNK})) : createReadStream(path, {highWaterMark: CHUNK})
  let doc: unknown
  try {
    doc = columnar ? await readColumnar(path, gz) : await readCanonical(open(), path)
  } catch (error) {
    if (error instanceof SnapshotFormatError) throw error
    if (!(error instanceof NotCanonical)) throw wrapIo(error, path)
    const buf = await fsp.readFile(path)
    let text: string
    try {
      text = (gz ? gunzipSync(buf) : buf).toString('utf8')
    } catch (gzError) {
      throw wrapIo(gzError, path)
    }
    doc = parseWhole(text, path)
  }
  if (!opts.skipValidation) {
    const problems = validateSnapshotShape(doc, 5)
    if (problems.length > 0) {
      const first = problems[0]
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : ''
      throw new SnapshotFormatError(`${path}: ${first.where} ${first.problem}${more}`)
    }
  }
  return doc as Snapshot
}

function wrapIo(error: unknown, path: string): Error {
  const e = error as NodeJS.ErrnoException
  if (e.code === 'Z_BUF_ERROR' || e.code === 'Z_DATA_ERROR' || /unexpected end of file/i.test(e.message)) {
    return new SnapshotFormatError(`${path}: the gzip data is truncated or corrupt (${e.message})`)
  }
  return new SnapshotFormatError(`${path}: cannot be read (${e.message})`)
}

/** For tests and tools that hold text rather than a file. */
export async function parseSnapshotText(text: string, nameHint = 'snapshot.json'): Promise<Snapshot> {
  try {
    return (await readCanonical(Readable.from([text]), nameHint)) as Snapshot
  } catch (error) {
    if (!(error instanceof NotCanonical)) throw error
    return parseWhole(text, nameHint) as Snapshot
  }
}
