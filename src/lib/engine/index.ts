/** The scheduler engine: pure functions of a CloudModel (no I/O). See docs/engine.md. */
export {simulateBoot, createEngineState, EngineState, consumeHost} from './pipeline.js'
export type {SimulationResult, SimulateOptions, HostVerdict, InstanceOutcome, FilterStep, WeighedView, Refusal} from './pipeline.js'
export {
  defaultSchedulerConfig,
  applyNovaConf,
  parseMultiplier,
  ZED_DEFAULT_FILTERS,
  ALL_WEIGHERS,
  MULTIPLIER_ALIASES,
  ENGINE_RELEASES,
  allWeighers,
  type EngineRelease,
} from './config.js'
export type {SchedulerConfig, PciAlias} from './config.js'
export type {BootRequest, MoveRequest, RequestSpec} from './request-spec.js'
export {availableZones, buildRequestSpec, placementRequestFor, runRequestFilters, findFlavor} from './request.js'
export {allocationCandidates} from './placement.js'
export {providerIndex} from './provider-index.js'
export {toQueryString} from './placement-query.js'
export {checkCandidateCapacity, checkClaimCapacity} from './placement-capacity-check.js'
export {FILTERS, resolveFilters} from './filters.js'
export {WEIGHERS, resolveWeighers, normalize, weighHosts} from './weighers.js'
export {DEFAULT_SEED, createRng} from './rng.js'
