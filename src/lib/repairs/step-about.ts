/**
 * A step in plain words, for the dry run an operator reads before the SQL: whom it acts for, in nova's
 * terms ("deleted instance <uuid> on cmp-r1-04 (cell cell1)"), and the row's own detail ("VCPU=2"). The
 * dry run lists the steps of one subject together and counts the rows of each action.
 */
export interface StepAbout {
  subject: string
  detail?: string
}

/** The subject of the generation bumps: placement's own guard, bumped once per provider or consumer written. */
export const GENERATIONS = 'placement generations'
