/**
 * Test-only preload: `node --import ./test/support/repair-pause.mjs bin/run.js ...` with
 * REPAIR_PAUSE=after-begin:MS | after-undo:MS | before-first-commit:MS | after-first-commit:MS holds the repair executor at that point, so that
 * a test can SIGKILL the real process there or race it from a second connection (kill.db.test.ts,
 * test/adversarial/executor-*.test.ts). It only sleeps and says so on stderr; it never changes what is
 * written. Production never loads it: the executor runs only the hooks registered with it.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {addProcessExecuteHooks} from '../../dist/lib/db/repair/executor.js'

const m = /^(after-begin|after-undo|before-first-commit|after-first-commit):(\d+)$/.exec(process.env.REPAIR_PAUSE ?? '')
if (!m) throw new Error(`repair-pause.mjs: REPAIR_PAUSE must be after-begin:MS, after-undo:MS, before-first-commit:MS or after-first-commit:MS, not ${JSON.stringify(process.env.REPAIR_PAUSE)}`)
const ms = Number(m[2])
const pause = async (what) => {
  process.stderr.write(`REPAIR_PAUSE: paused ${ms} ms ${what}\n`)
  await sleep(ms)
}
if (m[1] === 'after-begin') addProcessExecuteHooks({afterBegin: () => pause('after every transaction began, before the first step')})
else if (m[1] === 'before-first-commit') {
  let first = true
  addProcessExecuteHooks({
    beforeCommit: async (db) => {
      if (!first) return
      first = false
      await pause(`before the COMMIT of ${db}`)
    },
  })
} else if (m[1] === 'after-undo') addProcessExecuteHooks({afterUndoWritten: (file) => pause(`after writing ${file}, before the first COMMIT`)})
else {
  let first = true
  addProcessExecuteHooks({
    afterCommit: async (db) => {
      if (!first) return
      first = false
      await pause(`after the COMMIT of ${db}`)
    },
  })
}
