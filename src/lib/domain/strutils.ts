/** oslo strutils.bool_from_string (strict=False): how nova reads a boolean extra spec or image property. */
export function boolFromString(v: string | undefined): boolean {
  return v !== undefined && ['1', 't', 'true', 'on', 'y', 'yes'].includes(v.trim().toLowerCase())
}
