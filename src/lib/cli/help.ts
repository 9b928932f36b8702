import type {Command, Interfaces} from '@oclif/core'

import {exitCodeHelp} from '../errors.js'
import {Help} from './oclif.js'

/** oclif's help plus the one exit-code table, once, at the end of every help page (root and topics too). */
export default class CloudctlHelp extends Help {
  public override formatCommand(command: Command.Loadable): string {
    return `${super.formatCommand(command)}\n\n${exitCodeHelp()}`
  }

  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp()
    this.log(`\n${exitCodeHelp()}`)
  }

  protected override async showTopicHelp(topic: Interfaces.Topic): Promise<void> {
    await super.showTopicHelp(topic)
    this.log(`\n${exitCodeHelp()}`)
  }
}
