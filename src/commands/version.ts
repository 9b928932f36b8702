import {CloudctlCommand} from '../lib/cli/base-command.js'
import type {ListingSpec} from '../lib/output/formats.js'

export interface VersionResult {
  cloudctl: string
  node: string
  platform: string
}

export default class Version extends CloudctlCommand<typeof Version> {
  static override listing: ListingSpec = {
    columns: [{key: 'cloudctl'}, {key: 'node'}, {key: 'platform'}],
  }

  static override summary = 'Show the cloudctl version (and Node.js, platform), for bug reports.'

  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> -f value -c cloudctl']

  async run(): Promise<VersionResult> {
    const result = {cloudctl: this.config.version, node: process.versions.node, platform: `${process.platform}-${process.arch}`}
    this.out(`cloudctl ${result.cloudctl} (node ${result.node}, ${result.platform})`)
    return result
  }
}
