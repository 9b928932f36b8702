/** What a RequestSpec (nova_api.request_specs.spec) said, as a replay shows it (snake_case like nova's own fields). */
export interface RecordedRequest {
  instance_uuid: string
  flavor: {
    name: string | null
    flavorid: string | null
    vcpus: number
    memory_mb: number
    root_gb: number
    ephemeral_gb: number
    swap: number
    extra_specs: Record<string, string>
  }
  image: {id: string | null; disk_format: string | null; properties: Record<string, string>}
  availability_zone: string | null
  scheduler_hints: Record<string, string[]>
  instance_group: string | null
  requested_destination: {host: string | null; node: string | null} | null
  ignore_hosts: string[]
  force_hosts: string[]
  force_nodes: string[]
  project_id: string | null
  user_id: string | null
  num_instances: number
  is_bfv: boolean
  /** Parts of the spec the simulation does not model, said rather than dropped silently. */
  not_simulated: string[]
  /** Providers the instance itself still holds allocations on: the replay counts them as used. */
  holds_allocations_on: string[]
}
