/**
 * Placement's standard resource classes. Their ids are fixed by os-resource-classes and they have no
 * rows in `resource_classes`, which holds only CUSTOM_* classes (ids from 10000).
 */
export const STANDARD_RESOURCE_CLASSES = [
  'VCPU',
  'MEMORY_MB',
  'DISK_GB',
  'PCI_DEVICE',
  'SRIOV_NET_VF',
  'NUMA_SOCKET',
  'NUMA_CORE',
  'NUMA_THREAD',
  'NUMA_MEMORY_MB',
  'IPV4_ADDRESS',
  'VGPU',
  'VGPU_DISPLAY_HEAD',
  'NET_BW_EGR_KILOBIT_PER_SEC',
  'NET_BW_IGR_KILOBIT_PER_SEC',
  'PCPU',
  'MEM_ENCRYPTION_CONTEXT',
  'FPGA',
  'PGPU',
  'NET_PACKET_RATE_KILOPACKET_PER_SEC',
  'NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC',
  'NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC',
] as const

export type StandardResourceClass = (typeof STANDARD_RESOURCE_CLASSES)[number]

export const RC = {
  VCPU: 0,
  MEMORY_MB: 1,
  DISK_GB: 2,
  PCI_DEVICE: 3,
  SRIOV_NET_VF: 4,
  VGPU: 10,
  PCPU: 14,
} as const

export const CUSTOM_RESOURCE_CLASS_MIN_ID = 10000

/** Maps resource class ids to names and back, standard classes plus a snapshot's CUSTOM_* rows. */
export class ResourceClassRegistry {
  private readonly byId = new Map<number, string>()
  private readonly byName = new Map<string, number>()

  constructor(customRows: ReadonlyArray<{id: number; name: string}> = []) {
    STANDARD_RESOURCE_CLASSES.forEach((name, id) => this.add(id, name))
    for (const row of customRows) this.add(row.id, row.name)
  }

  name(id: number): string {
    return this.byId.get(id) ?? `UNKNOWN_RC_${id}`
  }

  id(name: string): number | undefined {
    return this.byName.get(name)
  }

  isCustom(id: number): boolean {
    return id >= CUSTOM_RESOURCE_CLASS_MIN_ID || (this.byId.get(id)?.startsWith('CUSTOM_') ?? false)
  }

  private add(id: number, name: string): void {
    this.byId.set(id, name)
    this.byName.set(name, id)
  }
}
