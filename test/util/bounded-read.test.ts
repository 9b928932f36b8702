/**
 * readBoundedFileSync (util/bounded-read.ts): the one reader of operator-named files. The growth
 * guard is exercised with a procfs file: its size reads 0, yet it has content, so only the byte count
 * of the read itself can stop it at the cap.
 */
import {mkdtempSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {readBoundedFileSync} from '../../src/lib/util/bounded-read.js'

const fail = (why: string, errno?: NodeJS.ErrnoException) => new Error(`refused: ${why}${errno ? ` [${errno.code}]` : ''}`)
const dir = mkdtempSync(join(tmpdir(), 'bounded-read-'))

describe('readBoundedFileSync', () => {
  it('reads a regular file whole, as UTF-8', () => {
    const file = join(dir, 'ok.conf')
    writeFileSync(file, '[DEFAULT]\nhost = nœud\n')
    expect(readBoundedFileSync(file, 1024, fail)).toBe('[DEFAULT]\nhost = nœud\n')
  })

  it('a file of exactly the cap is read; one byte more is refused by its size', () => {
    const file = join(dir, 'cap.conf')
    writeFileSync(file, 'x'.repeat(100))
    expect(readBoundedFileSync(file, 100, fail)).toHaveLength(100)
    expect(() => readBoundedFileSync(file, 99, fail)).toThrow('refused: 100 bytes, over the 99 bytes cloudctl reads from such a file')
  })

  it.each([
    ['/dev/zero', 'a character device, not a regular file'],
    ['/dev/urandom', 'a character device, not a regular file'],
    ['/', 'a directory, not a regular file'],
  ])('%s is refused without reading: %s', (path, why) => {
    expect(() => readBoundedFileSync(path, 1 << 20, fail)).toThrow(`refused: ${why}`)
  })

  it('a file whose size reads 0 but holds more than the cap stops at the cap (growth while reading)', () => {
    expect(statSync('/proc/self/maps').size).toBe(0)
    expect(() => readBoundedFileSync('/proc/self/maps', 512, fail)).toThrow(
      'refused: it grew past the 512 bytes cloudctl reads from such a file while being read',
    )
  })

  it('a missing file hands the errno to the caller', () => {
    expect(() => readBoundedFileSync(join(dir, 'absent'), 10, fail)).toThrow('refused: no such file [ENOENT]')
  })
})
