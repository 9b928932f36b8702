/**
 * A compute node of nova's ironic driver: one row and one provider per ironic node (hypervisor_hostname
 * and uuid the node's uuid), 0 vcpus / memory / disk and a single unit of the node's custom resource
 * class. Its counters and inventory follow the driver, not the libvirt resource tracker's arithmetic.
 */
export const isIronicNode = (cn: {hypervisor_type: string} | undefined): boolean => cn?.hypervisor_type === 'ironic'
