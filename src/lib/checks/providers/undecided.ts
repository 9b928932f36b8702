import type {FindingSubject, Open} from '../../domain/finding.js'
import {undecidedUnit} from '../unit.js'
import {staleProviders} from './stale.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'provider.undecided': [FindingSubject, Open]
  }
}

export const providerUndecided = undecidedUnit(
  'providers',
  'provider.undecided',
  'stale providers are',
  'a cell could not be read: providers that may belong to it are not judged',
  (ctx) => ({undecided_providers: staleProviders(ctx).undecided}),
)
