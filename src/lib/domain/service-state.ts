/**
 * Whether a nova-compute service counts as up, the way nova's servicegroup DB driver decides it:
 * shared by the checks (row findings of a dead host are informational) and the host repairs (which
 * refuse to overwrite rows a running resource tracker owns).
 */
import type {Service} from './snapshot.js'

/** nova's [DEFAULT] service_down_time. */
export const SERVICE_DOWN_TIME_S = 60

const ts = (t: string | null) => (t ? Date.parse(`${t.replace(' ', 'T')}Z`) : Number.NaN)

/** Up the way nova's servicegroup DB driver decides: not forced down, and reported within service_down_time. */
export function serviceUp(svc: Service | undefined, capturedAt: string): boolean {
  if (!svc || svc.deleted !== 0 || svc.forced_down) return false
  const last = Math.max(ts(svc.last_seen_up), ts(svc.updated_at), ts(svc.created_at))
  return !Number.isNaN(last) && Date.parse(capturedAt) - last <= SERVICE_DOWN_TIME_S * 1000
}
