/**
 * Upper bounds of the numeric flags that size what the simulation builds in memory. Without them a
 * typo such as --num-instances 1000000000 ran for minutes and died of an out-of-memory abort, and
 * 99999999999999999999 failed inside the engine. The bounds are generous for a 10 000-hypervisor
 * cloud; the --help text of each flag says why.
 */

/**
 * nova-api bounds max_count only by the project's `instances` quota (10 by default); the engine keeps
 * every instance's claim and verdicts, measured at 66 s and 2.7 GB for 100 000 instances.
 */
export const MAX_NUM_INSTANCES = 10_000

/** Ten times a 10 000-hypervisor cloud; each added host is a full compute node, provider and inventory. */
export const MAX_ADD_HOSTS = 100_000

/** 10000 -> '10,000' (toLocaleString loads ICU's locale data: ~7 ms of every simulate start-up). */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+$)/g, ',')

export const NUM_INSTANCES_HELP = `Number of instances in the request (at most ${grouped(MAX_NUM_INSTANCES)}: nova-api bounds a request only by the instances quota, 10 by default, and the simulation keeps every instance's claim and verdicts in memory).`

export const ADD_HOSTS_HELP = `What if N empty hosts like --like were added (at most ${grouped(MAX_ADD_HOSTS)}, ten times a 10,000-hypervisor cloud).`

/**
 * Counts with no natural bound (--max-count, --max-placement-results, --host-subset-size): a value past
 * 2^53 - 1 cannot even be held exactly (99999999999999999999 read as 1e20 and went into placement's
 * limit as "1e+20"), so the largest exact integer is the bound. Any real cloud is far below it.
 */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER
