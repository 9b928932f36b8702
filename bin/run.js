#!/usr/bin/env node
// Only ES2015 syntax and no static import before the version check: an older node must be able to
// parse this file to say what it needs, instead of failing on the syntax of the modules behind it.
var required = [22, 12]
var parts = process.versions.node.split('.').map(Number)
if (parts[0] < required[0] || (parts[0] === required[0] && parts[1] < required[1])) {
  process.stderr.write(
    'cloudctl: needs Node.js ' +
      required.join('.') +
      ' or later (24 LTS recommended); this is Node.js ' +
      process.version +
      ' (' +
      process.execPath +
      ').\n' +
      'Hint: install Node.js 24, or the cloudctl release tarball or .deb, which carry their own runtime (README, "Install").\n'
  )
  process.exit(2)
}
// Node's own compile cache (in $NODE_COMPILE_CACHE, or the system's temporary directory): the next
// start reuses what V8 compiled of this CLI's modules. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
enableCompileCache()
keepYoungGenerationSmall()
import('./main.js')

// V8 doubles the young generation each time most of it survives a scavenge, up to 2 x 64 MB: a
// capture keeps nearly every row it reads, so it does, and the peak RSS of a 10k-host audit carried
// those 128 MB (free space, once the rows are promoted). Held at its starting size, the 10k audit
// peaked 100-130 MB lower (about 790 MB instead of 920) for the same CPU time.
// A runtime flag (node's public v8.setFlagsFromString): the semi-space's maximum is fixed when the
// heap is made, but V8 reads the growth factor each time it would grow it.
function keepYoungGenerationSmall() {
  var v8 = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:v8') : undefined
  if (v8 && typeof v8.setFlagsFromString === 'function') v8.setFlagsFromString('--semi-space-growth-factor=1')
}

function enableCompileCache() {
  // process.getBuiltinModule (node >= 22.3) loads a built-in without an import statement.
  var mod = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:module') : undefined
  if (mod && typeof mod.enableCompileCache === 'function') mod.enableCompileCache()
}
