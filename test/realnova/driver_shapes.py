"""Blobs as real nova writes them on computes configured like production.

A module of its own (as driver_nested.py) so that driver.py's hash, and every
cached dump of its scenarios, stays as it is. One scenario, played for its
rows, not for findings: two cells of libvirt computes on nova's fake libvirt,
each with two sockets of hyperthreaded cores, 4 KiB, 2 MiB and 1 GiB pages,
a cpu_dedicated_set and a cpu_shared_set; servers booted with flavours that
carry a NUMA topology (shared guests on one NUMA node, pinned guests, pinned
guests on huge pages, an isolated emulator thread), with a key pair, a server
group and image properties, so that the compute node's numa_topology and
stats, instance_extra (numa_topology, flavor, vcpu_model, pci_requests,
keypairs ...) and request_specs are what a production compute leaves.

test/realnova/record-shapes.ts reads the dump into
test/fixtures/real-shapes/zed.json.

  REALNOVA_DUMP=/tmp/shapes.json /usr/bin/python3 -m testtools.run \
      driver_shapes.ShapesClouds.test_production_shapes
"""
import nova.monkey_patch  # noqa: F401,I100

from nova.tests.fixtures import libvirt as fakelibvirt

import driver

GIB_KB = 1024 * 1024


class ShapesClouds(driver.RealNovaClouds):

    def setUp(self):
        super().setUp()
        # Two sockets of 3 cores x 2 threads (12 CPUs, siblings 0-1, 2-3,
        # ...; the harness allows fewer than 16 CPUs, a production host has
        # more of the same): two cores of each socket for shared guests
        # and the host, the third dedicated.
        self.flags(cpu_dedicated_set='4-5,10-11',
                   cpu_shared_set='0-3,6-9', group='compute')
        self.flags(reserved_host_memory_mb=8192)
        self.flags(cpu_mode='host-model', group='libvirt')

    def _host_info(self):
        # 96 GiB per socket: 16 x 1 GiB and 4096 x 2 MiB pages reserved for
        # guests on huge pages, the rest 4 KiB pages.
        per_cell_kb = 96 * GIB_KB
        small = (per_cell_kb - 16 * GIB_KB - 4096 * 2048) // 4
        pages = [fakelibvirt.create_mempages(
            [(4, small), (2048, 4096), (1048576, 16)]) for _ in range(2)]
        return fakelibvirt.HostInfo(
            cpu_nodes=1, cpu_sockets=2, cpu_cores=3, cpu_threads=2,
            kB_mem=2 * per_cell_kb, mempages=pages)

    def _boot_with(self, flavor, name, host=None, key_name=None, hints=None):
        body = self._build_server(name=name, flavor_id=flavor,
                                  networks='none', host=host)
        if key_name:
            body['key_name'] = key_name
        request = {'server': body}
        if hints:
            request['os:scheduler_hints'] = hints
        api = self.admin_api if host else self.api
        return self._wait_for_state_change(api.post_server(request), 'ACTIVE')

    def test_production_shapes(self):
        self._computes({'cell1': ['host1', 'host2'], 'cell2': ['host3']})
        az1 = self._create_aggregate('agg-az1', availability_zone='az1')
        for host in ('host1', 'host2'):
            self.api.post_aggregate_action(az1, {'add_host': {'host': host}})
        shared = self._create_flavor(
            name='p.medium', vcpu=2, memory_mb=4096, disk=10, ephemeral=0,
            extra_spec={'hw:numa_nodes': '1'})
        shared_big = self._create_flavor(
            name='p.large', vcpu=4, memory_mb=8192, disk=20, ephemeral=0,
            swap=1024, extra_spec={'hw:numa_nodes': '1',
                                   'hw:watchdog_action': 'reset',
                                   'quota:disk_read_iops_sec': '5000'})
        pinned = self._create_flavor(
            name='p.pinned', vcpu=2, memory_mb=8192, disk=20, ephemeral=0,
            extra_spec={'hw:cpu_policy': 'dedicated',
                        'hw:cpu_thread_policy': 'prefer'})
        hugepages = self._create_flavor(
            name='p.nfv', vcpu=1, memory_mb=4096, disk=10, ephemeral=0,
            extra_spec={'hw:cpu_policy': 'dedicated',
                        'hw:mem_page_size': 'large',
                        'hw:emulator_threads_policy': 'isolate'})
        # Nova makes the key pair (an RSA public key), as before 2.92.
        latest, self.api.microversion = self.api.microversion, '2.91'
        self.api.post_keypair({'keypair': {'name': 'ops'}})
        self.api.microversion = latest
        group = self.api.post_server_groups(
            {'name': 'spread', 'policy': 'anti-affinity'})
        servers = []
        for i, host in enumerate(['host1', 'host2', 'host3'] * 2):
            servers.append(self._boot_with(shared, 's%d' % i, host=host,
                                           key_name='ops'))
        for i, host in enumerate(['host1', 'host2', 'host3']):
            servers.append(self._boot_with(shared_big, 'l%d' % i, host=host,
                                           key_name='ops'))
            servers.append(self._boot_with(pinned, 'p%d' % i, host=host,
                                           key_name='ops'))
            servers.append(self._boot_with(hugepages, 'h%d' % i, host=host))
        for i in range(2):
            servers.append(self._boot_with(
                shared, 'g%d' % i, hints={'group': group['id']}))
        self.notes['servers'] = [s['id'] for s in servers]
        # The resource tracker's periodic task, as on a running compute:
        # stats and NUMA usage written from the instances it finds.
        for host, compute in self.computes.items():
            compute.manager.update_available_resource(
                driver.nova_context.get_admin_context())
        self._dump()
