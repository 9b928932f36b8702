// The CLI proper, imported by bin/run.js once it has checked node's version (this file may use
// anything node 22 parses).
import {Buffer} from 'node:buffer'
import {readFileSync} from 'node:fs'
import {arch, platform, release} from 'node:os'
import {URL} from 'node:url'
import {inspect} from 'node:util'

const argv = process.argv.slice(2)
const debugOn = (process.env.DEBUG ?? '') !== ''

// Database URLs given as flags carry passwords, and `ps` (/proc/PID/cmdline) shows every user our
// argv: it is rewritten here, first, before anything slow is loaded (oclif took 0.24-0.39 s, all of
// it with the password on show). Only node's own start-up comes before this line; option files and
// profiles keep the password out of argv entirely.
const masking = await maskArgv(argv)

// `cloudctl --version` answers before @oclif/core is loaded: loading it is most of a start-up
// (~100 ms of CPU here). The line is oclif's user agent, word for word; anything unusual (more
// arguments, DEBUG, WSL, whose platform oclif names 'wsl') takes oclif's own path.
if (argv.length === 1 && argv[0] === '--version' && !debugOn && !/microsoft/i.test(release())) {
  const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`${pjson.name}/${pjson.version} ${platform()}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}\n`)
} else {
  await runOclif(masking)
}

/**
 * Sets process.title to argv with the URL flags' passwords masked; returns what a DEBUG trace must
 * replace (oclif's logger prints argv), or undefined when there is nothing to mask.
 */
async function maskArgv(argv) {
  const URL_FLAGS = new Set(['--api-db', '--placement-db', '--cell-db'])
  const secretValues = []
  for (const [i, arg] of argv.entries()) {
    const eq = arg.indexOf('=')
    if (arg.startsWith('--') && eq !== -1 && URL_FLAGS.has(arg.slice(0, eq)))
      secretValues.push({index: i, prefix: arg.slice(0, eq + 1), value: arg.slice(eq + 1)})
    else if (URL_FLAGS.has(arg) && i + 1 < argv.length) secretValues.push({index: i + 1, prefix: '', value: argv[i + 1]})
  }
  if (secretValues.length === 0 && !debugOn) return undefined
  // Two small modules (redact and the URL grammar it parses with), not the CLI.
  const {redact, scrub} = await import('../dist/lib/util/redact.js')
  const maskUrl = (url) => {
    const masked = redact(url)
    if (masked !== url) return masked
    // Nothing recognisable as a password, but the text may still be one (no '@', a typo): show the scheme only.
    const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(url)
    const rest = scheme ? url.slice(scheme[0].length) : url
    return /[:@]/.test(rest) ? `${scheme ? scheme[0] : ''}…` : url
  }
  const replacements = []
  const masked = [...argv]
  for (const s of secretValues) {
    const eq = s.prefix === '--cell-db=' || argv[s.index - 1] === '--cell-db' ? s.value.indexOf('=') : -1
    const shown = eq === -1 || s.value.slice(0, eq).includes('://') ? maskUrl(s.value) : `${s.value.slice(0, eq + 1)}${maskUrl(s.value.slice(eq + 1))}`
    masked[s.index] = `${s.prefix}${shown}`
    // The forms a logger may print a string in: raw, util.inspect-escaped, JSON-escaped.
    for (const form of new Set([s.value, inspect(s.value).slice(1, -1), JSON.stringify(s.value).slice(1, -1)])) {
      if (form !== '' && form !== shown) replacements.push([form, shown])
    }
  }
  replacements.sort((a, b) => b[0].length - a[0].length)
  if (secretValues.length > 0) {
    try {
      // Linux keeps the title within the original argv's bytes: a longer one is cut, never extended
      // into the old text, and the masked form is shorter than 'node /path/to/bin/run.js ...'.
      process.title = ['cloudctl', ...masked].join(' ')
    } catch {
      // not fatal: the README recommends keeping passwords out of argv
    }
  }
  return {replacements, scrub}
}

async function runOclif(masking) {
  // oclif as the build bundled it (src/lib/cli/oclif.ts), the copy the help class and commands use.
  const {execute, settings} = await import('../dist/lib/cli/oclif.js')

  // bin/run.js always runs the built dist/. Without this, NODE_ENV=test|development (vitest sets it,
  // so do some operators' shells) makes oclif map dist/ back to src/*.ts, which plain node cannot load.
  settings.enableAutoTranspile = false

  // oclif's DEBUG logger prints argv: it shows the masked copy.
  if (debugOn && masking) {
    const {replacements, scrub} = masking
    const clean = (text) => {
      let out = text
      for (const [form, shown] of replacements) out = out.split(form).join(shown)
      return scrub(out)
    }
    const write = process.stderr.write.bind(process.stderr)
    process.stderr.write = (chunk, ...rest) =>
      write(typeof chunk === 'string' ? clean(chunk) : Buffer.isBuffer(chunk) ? clean(chunk.toString('utf8')) : chunk, ...rest)
  }

  await execute({dir: import.meta.url})
}
