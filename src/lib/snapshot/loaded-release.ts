/**
 * The release of the snapshot a command loaded, so that every `--json` result can name it without
 * each command threading it through. A tiny module on purpose: the base command imports it.
 */
import type {SnapshotRelease} from '../domain/release.js'
import type {ReadFrom} from './read-from.js'

// undefined: the command loaded no snapshot; null: it did, and the snapshot records no release.
let current: SnapshotRelease | null | undefined

export function setLoadedRelease(release: SnapshotRelease | undefined): void {
  current = release ?? null
}

export function loadedRelease(): SnapshotRelease | null | undefined {
  return current
}

// Which server (and Galera node) each database of the loaded snapshot was read from ([]: not recorded).
let readFromList: ReadFrom[] = []

export function setLoadedReadFrom(list: ReadFrom[]): void {
  readFromList = list
}

export function loadedReadFrom(): ReadFrom[] {
  return readFromList
}
