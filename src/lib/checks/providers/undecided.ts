import {undecidedUnit} from '../unit.js'
import {staleProviders} from './stale.js'

export const providerUndecided = undecidedUnit(
  'providers',
  'provider.undecided',
  'stale providers are',
  'a cell could not be read: providers that may belong to it are not judged',
  (ctx) => ({undecided_providers: staleProviders(ctx).undecided}),
)
