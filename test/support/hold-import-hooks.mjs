/** The loader hooks of hold-import.mjs: they run on node's loader thread, so blocking here holds only the import. */
import {writeFileSync} from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'

let hold

export function initialize(data) {
  hold = data
}

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context)
  if (hold && result.url.endsWith(hold.suffix)) {
    writeFileSync(hold.marker, `${process.pid}\n`)
    await sleep(hold.ms)
    hold = undefined
  }
  return result
}
