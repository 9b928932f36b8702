/**
 * The query string of GET /allocation_candidates: how nova renders a PlacementRequest
 * (ResourceRequest.to_querystring) and the 400s placement 8 answers it with, in the order its
 * handler finds them. The search itself is in placement.ts.
 */
import type {CloudModel} from '../domain/model.js'
import type {PlacementRequest} from './placement-request.js'

/** What the validator needs of the provider index: the traits and resource classes placement knows. */
export interface KnownNames {
  knownTraits: ReadonlySet<string>
  model: Pick<CloudModel, 'rc'>
}

export function rootRequiredText(req: PlacementRequest): string {
  return [...[...req.rootRequired].sort(), ...[...req.rootForbidden].sort().map((t) => `!${t}`)].join(',')
}

// ---------------------------------------------------------------- placement's 400s

const QS_KEY = /^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$/

/** oslo uuidutils.is_uuid_like */
function isUuidLike(v: string): boolean {
  return /^[0-9a-f]{32}$/.test(
    v
      .replace(/urn:/g, '')
      .replace(/uuid:/g, '')
      .replace(/^[{}]+|[{}]+$/g, '')
      .replace(/-/g, '')
      .toLowerCase(),
  )
}

/** A microversion as a number: '1.39' -> 1039. */
export function microversionOf(req: PlacementRequest): number {
  const m = /^(\d+)\.(\d+)$/.exec(req.microversion ?? '1.36')
  return m ? Number(m[1]) * 1000 + Number(m[2]) : 1036
}

/** Python's repr of a list of str, as placement's messages print them. */
function pyList(items: string[]): string {
  return `[${items.map((x) => (x.includes("'") && !x.includes('"') ? `"${x}"` : `'${x.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`)).join(', ')}]`
}

const invalid = (what: string) => `Invalid query string parameters: ${what}`

/** util.normalize_traits_qs_param's refusals of one `required$S` value. */
function requiredValueError(val: string, anyTraits: boolean): string | null {
  if (!val.startsWith('in:')) return null
  if (!anyTraits) return invalid(`The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: ${val}`)
  const traits = val
    .slice(3)
    .split(',')
    .map((t) => t.trim())
  if (traits.some((t) => t === ''))
    return invalid(`Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: ${val}`)
  if (traits.some((t) => t.startsWith('!'))) return invalid(`The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: ${val}`)
  return null
}

/** RequestGroup._parse_request_items: the first malformed value, in query-string order. */
function paramError(params: Array<[string, string]>, anyTraits: boolean): string | null {
  for (const [key, val] of params) {
    const m = QS_KEY.exec(key)
    if (!m) continue
    if (m[1] === 'resources') {
      if (val.trim() === '')
        return 'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.'
      for (const rt of val.split(',')) {
        const [rc, amount] = rt.split(':') as [string, string]
        if (Number(amount) < 1) return `Requested resource ${rc} requires amount >= 1. Got: ${amount}.`
      }
    } else if (m[1] === 'required') {
      // before 1.39 a repeated required$S is read once, its last value; from 1.39 every value counts
      const values = params.filter(([k]) => k === key).map(([, v]) => v)
      for (const v of anyTraits ? values : values.slice(-1)) {
        const why = requiredValueError(v, anyTraits)
        if (why) return why
      }
    } else if (m[1] === 'member_of') {
      const uuids = val.replace(/^!?(in:)?/, '').split(',')
      const badUuid = uuids.find((u) => !isUuidLike(u))
      if (badUuid !== undefined) return invalid(`Expected 'member_of' parameter to contain valid UUID(s). Got: ${badUuid}`)
    } else if (!isUuidLike(val.trim())) return invalid(`Expected 'in_tree' parameter to be a format of uuid. Got: ${val}`)
  }
  return null
}

/**
 * RequestGroup.dict_from_request from 1.36: resourceless groups are allowed when same_subtree names
 * them, and same_subtree names only groups that exist (suffixes in the order the query gives them).
 */
function groupSetError(req: PlacementRequest, params: Array<[string, string]>): string | null {
  const resourceless = req.groups.filter((g) => g.resources.size === 0).map((g) => g.suffix)
  if (resourceless.length === req.groups.length) return 'There must be at least one resources or resources[$S] parameter.'
  const inSubtree = new Set((req.sameSubtree ?? []).flat())
  const notNamed = resourceless.filter((s) => !inSubtree.has(s)).sort()
  if (notNamed.length > 0) return `Resourceless suffixed group request should be specified in \`same_subtree\` query param: bad group(s) - ${pyList(notNamed)}.`
  const suffixes: string[] = []
  for (const [key] of params) {
    const m = QS_KEY.exec(key)
    if (m && !suffixes.includes(m[2] ?? '')) suffixes.push(m[2] ?? '')
  }
  const unknown = [...inSubtree].filter((s) => !suffixes.includes(s)).sort()
  if (unknown.length > 0) return `Real suffixes should be specified in \`same_subtree\`: ${pyList(unknown)} not found in ${pyList(suffixes)}.`
  return null
}

/** RequestGroup._check_forbidden: an all-of trait, or every trait of an any-of list, also forbidden. */
function conflictError(req: PlacementRequest): string | null {
  const conflicts: string[] = []
  for (const g of req.groups) {
    for (const t of g.required) if (g.forbidden.has(t)) conflicts.push(`required${g.suffix}: (${t})`)
    for (const anyOf of g.requiredAnyOf ?? [])
      if (anyOf.every((t) => g.forbidden.has(t))) conflicts.push(`required${g.suffix}: (${[...new Set(anyOf)].sort().join(', ')})`)
  }
  return conflicts.length > 0 ? `Conflicting required and forbidden traits found in the following traits keys: ${conflicts.sort().join(', ')}` : null
}

/**
 * The 400 placement 8 answers this query with, at the request's microversion (1.36, the one nova
 * Zed asks for, unless it says otherwise; 1.36 to 1.39 are modelled), checked in the order its
 * handler parses the query string; then TraitNotFound and ResourceClassNotFound, looked up
 * request-wide first, then group by group. null when none. nova's reaction to any of them is
 * NoValidHost.
 */
export function placementBadRequest(idx: KnownNames, req: PlacementRequest): string | null {
  const params = queryParams(req)
  // the JSON schema, over dict(req.GET)
  if (req.limit !== null && !(Number.isInteger(req.limit) && req.limit >= 1)) return invalid(`'${req.limit}' does not match '^[1-9][0-9]*$'`)
  if (req.groupPolicy !== null && req.groupPolicy !== 'none' && req.groupPolicy !== 'isolate')
    return invalid(`'${req.groupPolicy}' is not one of ['none', 'isolate']`)
  // RequestWideParams.from_request
  // root_required is parsed the pre-1.39 way at every microversion
  const rootParam = params.find(([k]) => k === 'root_required')
  if (rootParam && rootParam[1].startsWith('in:'))
    return invalid(`The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: ${rootParam[1]}`)
  const rootConflicts = [...req.rootRequired].filter((t) => req.rootForbidden.has(t))
  if (rootConflicts.length > 0) return `Conflicting required and forbidden traits found in root_required: ${rootConflicts.join(', ')}`
  if ((req.sameSubtree ?? []).some((l) => l.some((s) => s.trim() === ''))) return 'Empty string (unsuffixed group) can not be specified in `same_subtree` '
  const bad = paramError(params, microversionOf(req) >= 1039) ?? groupSetError(req, params) ?? conflictError(req)
  if (bad) return bad
  if (!req.groupPolicy && req.groups.filter((g) => g.suffix !== '').length > 1)
    return 'The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.'
  // AllocationCandidates.get_by_requests: root traits, then each group's classes and traits
  const unknownTrait = (names: Iterable<string>) => {
    for (const t of names) if (!idx.knownTraits.has(t)) return `No such trait(s): ${t}.`
    return null
  }
  const root = unknownTrait(req.rootRequired) ?? unknownTrait(req.rootForbidden)
  if (root) return root
  for (const g of req.groups) {
    for (const rc of g.resources.keys())
      if (idx.model.rc.id(rc) === undefined) return `Invalid resource class in resources parameter: No such resource class ${rc}.`
    const t = unknownTrait(g.required) ?? unknownTrait((g.requiredAnyOf ?? []).flat()) ?? unknownTrait(g.forbidden)
    if (t) return t
  }
  return null
}

// ---------------------------------------------------------------- query string

/** Python's urllib.parse.quote_plus. */
function quotePlus(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+')
}

/**
 * The (key, value) pairs nova's ResourceRequest.to_querystring() produces, sorted as it sorts them
 * (a group without resources still sends `resources$S=`, which placement refuses), or the query
 * the request says was sent.
 */
export function queryParams(req: PlacementRequest): Array<[string, string]> {
  if (req.query) return req.query
  const q: Array<[string, string]> = []
  if (req.limit !== null) q.push(['limit', String(req.limit)])
  if (req.groupPolicy !== null) q.push(['group_policy', req.groupPolicy])
  if (req.rootRequired.size > 0 || req.rootForbidden.size > 0) q.push(['root_required', rootRequiredText(req)])
  for (const suffixes of req.sameSubtree ?? []) q.push(['same_subtree', [...suffixes].sort().join(',')])
  for (const g of req.groups) {
    const s = g.suffix
    q.push([
      `resources${s}`,
      [...g.resources]
        .map(([rc, n]) => `${rc}:${n}`)
        .sort()
        .join(','),
    ])
    const traits = [...[...g.required].sort(), ...[...g.forbidden].sort().map((t) => `!${t}`)].join(',')
    if (traits) q.push([`required${s}`, traits])
    for (const anyOf of g.requiredAnyOf ?? []) q.push([`required${s}`, `in:${[...anyOf].sort().join(',')}`])
    const aggs = g.memberOf.map((l): [string, string] => [`member_of${s}`, `in:${[...l].sort().join(',')}`]).sort(cmpPair)
    q.push(...aggs)
    if (g.inTree) q.push([`in_tree${s}`, g.inTree])
    if (g.forbiddenAggregates.size > 0) q.push([`member_of${s}`, `!in:${[...g.forbiddenAggregates].sort().join(',')}`])
  }
  return q.sort(cmpPair)
}

function cmpPair(a: [string, string], b: [string, string]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0
}

export function toQueryString(req: PlacementRequest, opts: {encoded?: boolean} = {}): string {
  return queryParams(req)
    .map(([k, v]) => (opts.encoded ? `${quotePlus(k)}=${quotePlus(v)}` : `${k}=${v}`))
    .join('&')
}
