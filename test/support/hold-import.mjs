/**
 * Test-only preload: `node --import ./test/support/hold-import.mjs bin/run.js ...` with
 * HOLD_IMPORT=SUFFIX:MS and HOLD_MARKER=FILE holds the process at the moment bin/run.js asks for the
 * module whose URL ends in SUFFIX (e.g. dist/lib/cli/oclif.js): the marker file is written, then the
 * import waits MS milliseconds. A test reads /proc/PID/cmdline meanwhile (argv-early.test.ts). It
 * changes nothing the CLI does, only when.
 */
import {register} from 'node:module'

const m = /^(.+):(\d+)$/.exec(process.env.HOLD_IMPORT ?? '')
if (!m || !process.env.HOLD_MARKER) throw new Error('hold-import.mjs: set HOLD_IMPORT=SUFFIX:MS and HOLD_MARKER=FILE')
register('./hold-import-hooks.mjs', import.meta.url, {data: {suffix: m[1], ms: Number(m[2]), marker: process.env.HOLD_MARKER}})
