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
holdYoungGeneration()
import('./main.js')

// V8 doubles the young generation each time most of it survives a scavenge, up to 2 x 64 MB: a
// capture keeps nearly every row it reads, so it does, and the peak RSS of a 10k-host audit carried
// those 128 MB (free space, once the rows are promoted). Held at its 1 MB start, though, a capture
// pays a scavenge per megabyte it reads (390 on a 2k-host audit, 20-25 % of its CPU), each copying
// the rows it keeps; and V8 decides to allocate a site's objects (the rows) directly in the old
// generation only once the new space has reached 32 MB (--trace-pretenuring-statistics: no site
// tenured below it). At 32 MB a 10k-host audit spends 0.44 s in scavenges instead of 0.98 s at
// 16 MB and 1.1 s at 1 MB, for a peak RSS about that of the 1 MB young generation (699 MB against
// 685 at 16 MB and 776 at 1 MB, where the checks' short-lived objects were promoted before they
// died). So it may grow, by V8's own rule, to 32 MB and no further.
// Runtime flags (node's public v8.setFlagsFromString): the semi-space's maximum is fixed when the
// heap is made, but V8 reads the growth factor each time it would grow it; a GC observer stops the
// growth once the new space has reached the size.
function holdYoungGeneration() {
  var v8 = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:v8') : undefined
  if (!v8 || typeof v8.setFlagsFromString !== 'function' || typeof v8.getHeapSpaceStatistics !== 'function') return
  var youngMb = 32
  var hooks = process.getBuiltinModule('node:perf_hooks')
  var newSpace = function () {
    var spaces = v8.getHeapSpaceStatistics()
    for (var i = 0; i < spaces.length; i++) if (spaces[i].space_name === 'new_space') return spaces[i].space_size
    return Infinity
  }
  if (!hooks || newSpace() >= youngMb * 1048576) {
    v8.setFlagsFromString('--semi-space-growth-factor=1')
    return
  }
  var observer = new hooks.PerformanceObserver(function () {
    if (newSpace() < youngMb * 1048576) return
    v8.setFlagsFromString('--semi-space-growth-factor=1')
    observer.disconnect()
  })
  observer.observe({entryTypes: ['gc']})
}

function enableCompileCache() {
  // process.getBuiltinModule (node >= 22.3) loads a built-in without an import statement.
  var mod = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:module') : undefined
  if (mod && typeof mod.enableCompileCache === 'function') mod.enableCompileCache()
}
