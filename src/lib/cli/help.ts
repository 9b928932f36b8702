import type {Command, Interfaces} from '@oclif/core'

import {exitCodeHelp} from '../errors.js'
import {CommandHelp, Help} from './oclif.js'

/**
 * oclif renders every string of a help page as an ejs template, compiled afresh each time: most of
 * what a root `--help` spends after loading. Text with no tag in it (no `<%`, nor a stray `%>` that
 * ejs would also read) renders as itself, so only the rest goes through ejs.
 */
function skipPlainText(formatter: {render: (input: string) => string}): void {
  const template = formatter.render
  formatter.render = (input) => (input.includes('<%') || input.includes('%>') ? template(input) : input)
}

/** oclif's help plus the one exit-code table, once, at the end of every help page (root and topics too). */
export default class CloudctlHelp extends Help {
  public constructor(config: Interfaces.Config, opts?: Partial<Interfaces.HelpOptions>) {
    super(config, opts)
    skipPlainText(this)
  }

  public override formatCommand(command: Command.Loadable): string {
    return `${super.formatCommand(command)}\n\n${exitCodeHelp(this.opts.maxWidth)}`
  }

  protected override getCommandHelpClass(command: Command.Loadable): CommandHelp {
    const help = super.getCommandHelpClass(command)
    skipPlainText(help)
    return help
  }

  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp()
    this.log(`\n${exitCodeHelp(this.opts.maxWidth)}`)
  }

  protected override async showTopicHelp(topic: Interfaces.Topic): Promise<void> {
    await super.showTopicHelp(topic)
    this.log(`\n${exitCodeHelp(this.opts.maxWidth)}`)
  }
}
