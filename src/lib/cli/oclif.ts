/**
 * Every run-time use of @oclif/core in cloudctl comes through here (lint-enforced; type imports may
 * name the package). The build replaces this module's output with @oclif/core bundled into one CommonJS file
 * (scripts/bundle-vendor.mjs): loaded as its ~100 separate modules, oclif costs a start-up module
 * resolution that node's compile cache does not save, more than the rest of a `--help`. One door also
 * means one copy: bin/run.js, the help class and the commands must share oclif's classes, because
 * its error handler tells an exit from a failure with instanceof.
 */
// The subpaths, not the package index, which also checks node's version with semver on load.
export * as Args from '@oclif/core/args'
export {Command} from '@oclif/core/command'
export * as Errors from '@oclif/core/errors'
export {execute} from '@oclif/core/execute'
export * as Flags from '@oclif/core/flags'
export {CommandHelp, Help} from '@oclif/core/help'
export {run} from '@oclif/core/run'
export {settings} from '@oclif/core/settings'
export {ux} from '@oclif/core/ux'
export type {Interfaces} from '@oclif/core'
