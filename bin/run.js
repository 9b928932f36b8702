#!/usr/bin/env node
// Only ES2015 syntax and no static import before the version check: an older node must be able to
// parse this file to say what it needs, instead of failing on the syntax of the modules behind it.
var required = [22, 12]
var parts = process.versions.node.split('.').map(Number)
if (parts[0] < required[0] || (parts[0] === required[0] && parts[1] < required[1])) {
  process.stderr.write(
    'cloudctl: needs Node.js ' + required.join('.') + ' or later (24 LTS recommended); this is Node.js ' + process.version + ' (' + process.execPath + ').\n' +
      'Hint: install Node.js 24, or the cloudctl release tarball or .deb, which carry their own runtime (README, "Install").\n',
  )
  process.exit(2)
}
// Node's own compile cache (in $NODE_COMPILE_CACHE, or the system's temporary directory): the next
// start reuses what V8 compiled of this CLI's modules. NODE_DISABLE_COMPILE_CACHE=1 turns it off.
enableCompileCache()
import('./main.js')

function enableCompileCache() {
  // process.getBuiltinModule (node >= 22.3) loads a built-in without an import statement.
  var mod = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:module') : undefined
  if (mod && typeof mod.enableCompileCache === 'function') mod.enableCompileCache()
}
