import {Command, Help} from '@oclif/core'

import {exitCodeHelp} from '../errors.js'

/** oclif's help plus the one exit-code table, on every command's --help. */
export default class CloudctlHelp extends Help {
  public override formatCommand(command: Command.Loadable): string {
    return `${super.formatCommand(command)}\n\n${exitCodeHelp()}`
  }
}
