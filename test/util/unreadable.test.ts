/**
 * The words config, nova.conf and option-file errors give for a file they cannot read: one
 * function (util/atomic-file.ts unreadableText), so the three say the same thing for the same errno.
 */
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {loadConfigFile} from '../../src/lib/config/file.js'
import {readNovaConf} from '../../src/lib/config/nova-conf.js'
import {readOptionFile} from '../../src/lib/db/url.js'
import {unreadableText} from '../../src/lib/util/atomic-file.js'

const errno = (code: string) => Object.assign(new Error(`${code}: raw message`), {code})

describe('unreadableText', () => {
  it.each([
    ['ENOENT', 'no such file'],
    ['EACCES', 'permission denied'],
    ['EISDIR', 'a directory'],
    ['ENOTDIR', 'a path component is not a directory (ENOTDIR)'],
    ['EWEIRD', 'EWEIRD (EWEIRD)'],
  ])('%s: %s', (code, text) => {
    expect(unreadableText(errno(code))).toBe(text)
  })

  it('a directory given as the file reads the same from all three readers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'unreadable-'))
    expect(() => loadConfigFile(dir, {})).toThrow(`cannot read config file ${dir}: a directory`)
    expect(() => readNovaConf(dir)).toThrow(`cannot read nova.conf ${dir}: a directory`)
    expect(() => readOptionFile(dir, 'client', 'api-db')).toThrow(`cannot read option file ${dir} (read_default_file): a directory`)
  })
})
