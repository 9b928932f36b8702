import type {FindingSubject, Open} from '../../domain/finding.js'
import {undecidedUnit} from '../unit.js'

declare module '../../domain/finding.js' {
  interface FindingShapes {
    'usage.undecided': [FindingSubject, Open]
  }
}

export const usageUndecided = undecidedUnit('usage', 'usage.undecided', 'usage of its compute nodes is')
