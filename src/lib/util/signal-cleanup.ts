/**
 * Temporary files a signal must not leave behind. A whole-file write goes to PATH.tmp-PID and is
 * renamed over PATH; Ctrl-C (SIGINT), SIGTERM (systemd stopping a timer's run) or SIGHUP (a closed
 * ssh session) in the middle left that file for good. While a write is in flight its temporary name
 * is registered here: on one of those signals each is removed, then the process dies of the signal
 * as it would have (the handler is removed and the signal raised again), so the exit status still
 * says "killed by SIGINT" to a shell or a supervisor.
 */
import {rmSync} from 'node:fs'

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
const pending = new Set<string>()

function onSignal(signal: NodeJS.Signals): void {
  for (const path of pending) rmSync(path, {force: true})
  pending.clear()
  for (const s of SIGNALS) process.removeListener(s, onSignal)
  process.kill(process.pid, signal)
}

/** Removes `path` if a signal ends the process before the returned function is called. */
export function removeOnSignal(path: string): () => void {
  if (pending.size === 0) for (const s of SIGNALS) process.on(s, onSignal)
  pending.add(path)
  return () => {
    pending.delete(path)
    if (pending.size === 0) for (const s of SIGNALS) process.removeListener(s, onSignal)
  }
}
