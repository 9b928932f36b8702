/**
 * The kinds of repair plan. An interface, not a union, so that a new planner module adds its own kind
 * (`declare module './kinds.js'`) without editing this file.
 */
export interface RepairKinds {
  leaks: true
  providers: true
  pinning: true
  usage: true
  aggregates: true
  'map-instances': true
  'discover-hosts': true
  undo: true
}

export type RepairKind = keyof RepairKinds
