/**
 * What earlier simulated claims consumed, so that a capacity planner or a drain can keep booting into
 * the same cloud: placement usage deltas and the host states replaced by consume_from_request.
 */
import type {HostState} from './host-state.js'
import type {ProviderIndex, UsageView} from './provider-index.js'

/** Cheap to clone (maps of references; host states are replaced, never mutated). */
export class EngineState {
  constructor(
    readonly usageDelta = new Map<number, Map<number, number>>(),
    readonly hosts = new Map<string, HostState>(),
    public placed = 0,
  ) {}

  clone(): EngineState {
    const usage = new Map<number, Map<number, number>>()
    for (const [k, v] of this.usageDelta) usage.set(k, new Map(v))
    return new EngineState(usage, new Map(this.hosts), this.placed)
  }

  usageView(idx: ProviderIndex): UsageView {
    return {
      used: (rpId, rcId) => (idx.baseUsage.get(rpId)?.get(rcId) ?? 0) + (this.usageDelta.get(rpId)?.get(rcId) ?? 0),
      base: idx.baseUsage,
      delta: this.usageDelta,
    }
  }

  addUsage(rpId: number, rcId: number, amount: number): void {
    let m = this.usageDelta.get(rpId)
    if (!m) this.usageDelta.set(rpId, (m = new Map()))
    m.set(rcId, (m.get(rcId) ?? 0) + amount)
  }
}

export function createEngineState(): EngineState {
  return new EngineState()
}
