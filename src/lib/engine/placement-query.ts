/**
 * The query string of GET /allocation_candidates: how nova renders a PlacementRequest
 * (ResourceRequest.to_querystring) and the 400s placement 8 answers it with, in the order its
 * handler finds them. The search itself is in placement.ts.
 */
import type {PlacementRequest, ProviderIndex} from './placement.js'

export function rootRequiredText(req: PlacementRequest): string {
  return [...[...req.rootRequired].sort(), ...[...req.rootForbidden].sort().map((t) => `!${t}`)].join(',')
}

// ---------------------------------------------------------------- placement's 400s

const QS_KEY = /^(resources|required|member_of|in_tree)([a-zA-Z0-9_-]{1,64})?$/

/** oslo uuidutils.is_uuid_like */
function isUuidLike(v: string): boolean {
  return /^[0-9a-f]{32}$/.test(v.replace(/urn:/g, '').replace(/uuid:/g, '').replace(/^[{}]+|[{}]+$/g, '').replace(/-/g, '').toLowerCase())
}

/**
 * The 400 placement 8 answers this query with at microversion 1.36 (the one nova Zed asks for),
 * checked in the order its handler parses the query string nova sends; then TraitNotFound and
 * ResourceClassNotFound, looked up request-wide first, then group by group. null when none.
 * nova's reaction to any of them is NoValidHost.
 */
export function placementBadRequest(idx: ProviderIndex, req: PlacementRequest): string | null {
  const params = queryParams(req)
  const invalid = (what: string) => `Invalid query string parameters: ${what}`
  // the JSON schema, over dict(req.GET)
  if (req.limit !== null && !(Number.isInteger(req.limit) && req.limit >= 1)) return invalid(`'${req.limit}' does not match '^[1-9][0-9]*$'`)
  if (req.groupPolicy !== null && req.groupPolicy !== 'none' && req.groupPolicy !== 'isolate') return invalid(`'${req.groupPolicy}' is not one of ['none', 'isolate']`)
  // RequestWideParams.from_request
  const rootConflicts = [...req.rootRequired].filter((t) => req.rootForbidden.has(t))
  if (rootConflicts.length > 0) return `Conflicting required and forbidden traits found in root_required: ${rootConflicts.join(', ')}`
  // RequestGroup._parse_request_items, in query-string order
  for (const [key, val] of params) {
    const m = QS_KEY.exec(key)
    if (!m) continue
    if (m[1] === 'resources') {
      if (val.trim() === '') return 'Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.'
      for (const rt of val.split(',')) {
        const [rc, amount] = rt.split(':') as [string, string]
        if (Number(amount) < 1) return `Requested resource ${rc} requires amount >= 1. Got: ${amount}.`
      }
    } else if (m[1] === 'required') {
      if (val.startsWith('in:')) return invalid(`The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: ${val}`)
    } else if (m[1] === 'member_of') {
      const uuids = val.replace(/^!?(in:)?/, '').split(',')
      const badUuid = uuids.find((u) => !isUuidLike(u))
      if (badUuid !== undefined) return invalid(`Expected 'member_of' parameter to contain valid UUID(s). Got: ${badUuid}`)
    } else if (!isUuidLike(val.trim())) return invalid(`Expected 'in_tree' parameter to be a format of uuid. Got: ${val}`)
  }
  // RequestGroup.dict_from_request: no same_subtree is sent, so every group needs resources
  const resourceless = req.groups.filter((g) => g.resources.size === 0)
  if (resourceless.length === req.groups.length) return 'There must be at least one resources or resources[$S] parameter.'
  const conflicts = req.groups.flatMap((g) => [...g.required].filter((t) => g.forbidden.has(t)).map((t) => `required${g.suffix}: (${t})`)).sort()
  if (conflicts.length > 0) return `Conflicting required and forbidden traits found in the following traits keys: ${conflicts.join(', ')}`
  if (!req.groupPolicy && req.groups.filter((g) => g.suffix !== '').length > 1) return 'The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.'
  // AllocationCandidates.get_by_requests: root traits, then each group's classes and traits
  const unknownTrait = (names: Iterable<string>) => {
    for (const t of names) if (!idx.knownTraits.has(t)) return `No such trait(s): ${t}.`
    return null
  }
  const root = unknownTrait(req.rootRequired) ?? unknownTrait(req.rootForbidden)
  if (root) return root
  for (const g of req.groups) {
    for (const rc of g.resources.keys()) if (idx.model.rc.id(rc) === undefined) return `Invalid resource class in resources parameter: No such resource class ${rc}.`
    const t = unknownTrait(g.required) ?? unknownTrait(g.forbidden)
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

/** The (key, value) pairs nova's ResourceRequest.to_querystring() produces, sorted as it sorts them. */
export function queryParams(req: PlacementRequest): Array<[string, string]> {
  const q: Array<[string, string]> = []
  if (req.limit !== null) q.push(['limit', String(req.limit)])
  if (req.groupPolicy !== null) q.push(['group_policy', req.groupPolicy])
  if (req.rootRequired.size > 0 || req.rootForbidden.size > 0) q.push(['root_required', rootRequiredText(req)])
  for (const g of req.groups) {
    const s = g.suffix
    q.push([`resources${s}`, [...g.resources].map(([rc, n]) => `${rc}:${n}`).sort().join(',')])
    const traits = [...[...g.required].sort(), ...[...g.forbidden].sort().map((t) => `!${t}`)].join(',')
    if (traits) q.push([`required${s}`, traits])
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
