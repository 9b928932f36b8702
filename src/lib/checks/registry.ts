/**
 * Every finding code, once: the units in the order `cloudctl explain` lists them (by check, as in
 * docs/checks.md). Adding a code is a new unit file under its check's folder plus one line here.
 */
import {aggregateUndecided} from './aggregates/undecided.js'
import {azConflict} from './aggregates/az-conflict.js'
import {extraInPlacement} from './aggregates/extra-in-placement.js'
import {hostNotFound} from './aggregates/host-not-found.js'
import {missingInPlacement} from './aggregates/missing-in-placement.js'
import {noUuid} from './aggregates/no-uuid.js'
import {buildRequestStale} from './cells/build-request-stale.js'
import {hostMappedWrongCell} from './cells/host-mapped-wrong-cell.js'
import {hostMappingStale} from './cells/host-mapping-stale.js'
import {hostUnmapped} from './cells/host-unmapped.js'
import {identityUnproven} from './cells/identity-unproven.js'
import {instanceDuplicate} from './cells/instance-duplicate.js'
import {instanceMappedWrongCell} from './cells/instance-mapped-wrong-cell.js'
import {instanceMappingStale} from './cells/instance-mapping-stale.js'
import {instanceUnmapped} from './cells/instance-unmapped.js'
import {cellUndecided} from './cells/undecided.js'
import {amountMismatch} from './leaks/amount-mismatch.js'
import {consumerDeleted} from './leaks/consumer-deleted.js'
import {consumerIncomplete} from './leaks/consumer-incomplete.js'
import {consumerUnknown} from './leaks/consumer-unknown.js'
import {evacuationLeftover} from './leaks/evacuation-leftover.js'
import {migrationFinished} from './leaks/migration-finished.js'
import {allocationMissing} from './leaks/missing.js'
import {allocationUndecided} from './leaks/undecided.js'
import {wrongProvider} from './leaks/wrong-provider.js'
import {pinningLeaked} from './pinning/leaked.js'
import {outsideDedicatedSet} from './pinning/outside-dedicated-set.js'
import {pinningOverlap} from './pinning/overlap.js'
import {placementDrift} from './pinning/placement-drift.js'
import {pinningUnaccounted} from './pinning/unaccounted.js'
import {pinningUndecided} from './pinning/undecided.js'
import {duplicateName} from './providers/duplicate-name.js'
import {inventoryDrift} from './providers/inventory-drift.js'
import {providerMissing} from './providers/missing.js'
import {overCapacity} from './providers/over-capacity.js'
import {providerStale} from './providers/stale.js'
import {treeLoop} from './providers/tree-loop.js'
import {providerUndecided} from './providers/undecided.js'
import {uuidMismatch} from './providers/uuid-mismatch.js'
import {unreadableBlob} from './snapshot/unreadable-blob.js'
import type {CheckUnit} from './unit.js'
import {negativeFree} from './usage/negative-free.js'
import {nodeDrift} from './usage/node-drift.js'
import {usageUndecided} from './usage/undecided.js'

export const UNITS: readonly CheckUnit[] = [
  consumerDeleted,
  consumerUnknown,
  migrationFinished,
  wrongProvider,
  evacuationLeftover,
  allocationMissing,
  amountMismatch,
  consumerIncomplete,
  allocationUndecided,
  providerStale,
  uuidMismatch,
  providerMissing,
  duplicateName,
  overCapacity,
  inventoryDrift,
  treeLoop,
  providerUndecided,
  instanceUnmapped,
  instanceMappedWrongCell,
  instanceDuplicate,
  instanceMappingStale,
  buildRequestStale,
  hostUnmapped,
  hostMappingStale,
  hostMappedWrongCell,
  identityUnproven,
  cellUndecided,
  pinningLeaked,
  pinningUnaccounted,
  pinningOverlap,
  outsideDedicatedSet,
  placementDrift,
  pinningUndecided,
  nodeDrift,
  negativeFree,
  usageUndecided,
  missingInPlacement,
  extraInPlacement,
  hostNotFound,
  azConflict,
  noUuid,
  aggregateUndecided,
  unreadableBlob,
]
