/** Progress reports from long reads; commands print them on stderr only when it is a TTY. */
export interface ProgressEvent {
  /** 'nova_api', 'placement', or the cell name */
  database: string
  table: string
  rows: number
  done: boolean
}

export type ProgressSink = (event: ProgressEvent) => void

export const noProgress: ProgressSink = () => {}
