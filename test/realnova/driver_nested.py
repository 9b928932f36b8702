"""Scenarios on nested and sharing provider trees, played by real nova.

A module of its own (factory.py DRIVERS) so that driver.py's hash, and with
it every cached dump of its scenarios, stays as it is. The class is
driver.py's (its dump, heartbeat and flavour helpers) mixed with nova's own
functional bases for the devices that make child providers:

- vgpu_sharing: libvirt computes whose fake mdev-capable GPUs are reported
  as child providers (nova's VGPUTestBase), and whose DISK_GB comes from a
  sharing provider in a placement aggregate (the local disk is too small
  for any flavour). Resizes confirmed and reverted, a cold migration, an
  evacuation from a dead host, and a confirm whose migration allocation
  placement refused (the leak spans the source, its vGPU child and the
  sharing provider).
- qos_bandwidth: computes with neutron-owned bandwidth providers under them
  (nova's PortResourceRequestBasedSchedulingTestBase: the fake driver and
  neutron fixture with ports that carry a resource request), a server
  with QoS ports migrated and confirmed, then evacuated from a dead host.
- pci_placement: Zed's [pci]report_in_placement (nova's
  PlacementPCIReportingTests): each assignable PCI device a child provider
  with one custom-class unit the resource tracker allocates; a PCI guest
  migrated, one deleted, one evacuated from a dead host.

Run one scenario (the factory does this):
  REALNOVA_DUMP=/tmp/x.json /usr/bin/python3 -m testtools.run \
      driver_nested.NestedClouds.test_vgpu_sharing
"""
import nova.monkey_patch  # noqa: F401,I100

import fixtures
from oslo_serialization import jsonutils
from oslo_utils.fixture import uuidsentinel as uuids

from nova import exception
from nova.tests import fixtures as nova_fixtures
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional.libvirt import test_pci_in_placement
from nova.tests.functional.libvirt import test_vgpu
from nova.tests.functional import test_servers_resource_request as qos

import driver

SHARED_DISK = 'shared-disk'


class NestedClouds(driver.RealNovaClouds, test_vgpu.VGPUTestBase):
    """driver.py's harness with nova's vGPU fakes (mdevs on fake libvirt)."""

    def setUp(self):
        # Moves go to the first free host by name (host1, host2, host3):
        # boots cannot name their host (below), moves then land predictably.
        self.useFixture(nova_fixtures.HostNameWeigherFixture())
        super().setUp()
        self.flags(enabled_mdev_types=fakelibvirt.NVIDIA_11_VGPU_TYPE,
                   group='devices')
        # Each compute's own disk holds 1 GB: every flavour's root disk
        # comes from the sharing provider, as on a cloud with images on
        # shared storage.
        from nova.virt.libvirt import driver as libvirt_driver
        libvirt_driver.LibvirtDriver._get_local_gb_info.return_value = {
            'total': 1, 'used': 0, 'free': 1}

    def _vgpu_computes(self, hosts):
        for host in hosts:
            self.start_compute(
                hostname=host, host_info=self._host_info(), cell_name='cell1',
                pci_info=fakelibvirt.HostPCIDevicesInfo(
                    num_pci=0, num_pfs=0, num_vfs=0, num_mdevcap=2))

    def _sharing_disk(self, hosts):
        """A DISK_GB provider shared with `hosts` through one placement
        aggregate, set up as an operator does (placement API only)."""
        rp = self._post_resource_provider(SHARED_DISK)['uuid']
        self._set_inventory(rp, {
            'resource_class': 'DISK_GB', 'total': 1000, 'reserved': 0,
            'min_unit': 1, 'max_unit': 1000, 'step_size': 1,
            'allocation_ratio': 1.0})
        self._set_provider_traits(rp, ['MISC_SHARES_VIA_AGGREGATE'])
        self._set_aggregate(rp, uuids.shared_disk_agg)
        for host in hosts:
            self._set_aggregate(self.compute_rp_uuids[host],
                                uuids.shared_disk_agg)
        return rp

    def _boot_on(self, flavor, host, name):
        """A boot onto `host` with the other computes disabled meanwhile: a
        requested host becomes placement's in_tree, which (placement 8)
        leaves sharing providers out, so no host could be named."""
        others = [sv for sv in self.admin_api.get_services(
            binary='nova-compute') if sv['host'] != host]
        for sv in others:
            self.admin_api.put_service(sv['id'], {'status': 'disabled'})
        try:
            return self._boot(flavor, name=name)
        finally:
            for sv in others:
                self.admin_api.put_service(sv['id'], {'status': 'enabled'})

    def _confirm_on(self, server, source):
        # VGPUTestBase's confirm sets [DEFAULT]host to the source's name
        # (the libvirt driver reads it there when cleaning up).
        test_vgpu.VGPUTestBase._confirm_resize(self, server, host=source)

    # ------------------------------------------------------------ scenarios

    def test_vgpu_sharing(self):
        self._vgpu_computes(['host1', 'host2', 'host3'])
        self._flavors()
        self.vgpu = self._create_flavor(
            name='rn.vgpu', vcpu=1, memory_mb=512, disk=2, ephemeral=0,
            extra_spec={'resources:VGPU': '1'})
        self.vgpu_big = self._create_flavor(
            name='rn.vgpu-big', vcpu=2, memory_mb=1024, disk=4, ephemeral=0,
            extra_spec={'resources:VGPU': '1'})
        shared = self._sharing_disk(['host1', 'host2', 'host3'])
        self.notes['sharing'] = {'provider': shared}
        self._run_periodics()
        plain = self._boot_on(self.small, 'host1', 'plain')
        g1 = self._boot_on(self.vgpu, 'host1', 'gpu-confirmed')
        g2 = self._boot_on(self.vgpu, 'host2', 'gpu-reverted')
        # vGPU resize to another host, confirmed; another one reverted.
        self._resize_server(g1, self.vgpu_big)
        self._confirm_on(g1, 'host1')
        self._resize_server(g2, self.vgpu_big)
        self._revert_resize(g2)
        # A plain server cold-migrated (its disk stays on the sharing
        # provider, its instance consumer holds it twice while it moves).
        self._migrate_server(plain)
        self._confirm_on(plain, 'host1')
        # A confirm whose migration allocation placement refused (a
        # consumer generation conflict, as a concurrent write gives): nova
        # errors the instance and says the migration's allocation is
        # leaked: source root, its vGPU child and the sharing provider.
        leaky = self._boot_on(self.vgpu, 'host2', 'gpu-leaked')
        self._resize_server(leaky, self.vgpu_big)
        from nova.scheduler.client import report
        real = report.SchedulerReportClient.delete_allocation_for_instance

        def refuse(client, context, uuid, consumer_type='instance',
                   force=False):
            if consumer_type == 'migration':
                raise exception.AllocationDeleteFailed(
                    consumer_uuid=uuid, error='consumer generation conflict')
            return real(client, context, uuid, consumer_type=consumer_type,
                        force=force)
        with fixtures.MonkeyPatch(
                'nova.scheduler.client.report.SchedulerReportClient'
                '.delete_allocation_for_instance', refuse):
            # (the libvirt driver's cleanup reads the source in CONF.host)
            from nova import conf as nova_conf
            was = nova_conf.CONF.host
            self.flags(host='host2')
            # The harness runs the compute's cast as a call: the API
            # answers 500 with nova-compute's exception; on a cloud the
            # API answers 204 and the cast fails the same way.
            from nova.tests.functional.api import client
            try:
                self.api.post_server_action(leaky['id'],
                                            {'confirmResize': None})
            except client.OpenStackApiException as e:
                self.assertIn('AllocationDeleteFailed', str(e))
            self._wait_for_state_change(leaky, 'ERROR')
            self.flags(host=was)
        self.notes['leaked_migration'] = {
            'server': leaky['id'],
            'migration': self.get_migration_uuid_for_instance(leaky['id'])}
        # host3 dies with a server on it: evacuated, host3 never back. (A
        # vGPU guest cannot be evacuated on the fake mdevs: the rebuild finds
        # no mdev-capable device; the PCI and QoS plays evacuate children.)
        gone = self._boot_on(self.small, 'host3', 'evacuated')
        self._host_down('host3')
        self._evacuate_server(gone, expected_host=None)
        del self.computes['host3']
        self.notes['evacuated'] = {'server': gone['id']}
        self._run_periodics()
        self._dump()


class QosClouds(qos.PortResourceRequestBasedSchedulingTestBase):
    """nova's QoS port scheduling base (fake driver, neutron fixture with
    bandwidth-requesting ports, bandwidth providers under each compute),
    dumped with driver.py's helpers."""

    microversion = 'latest'

    _dump = driver.RealNovaClouds._dump
    _heartbeat = driver.RealNovaClouds._heartbeat

    def setUp(self):
        # The fake driver's PCI devices carry ids longer than the 4
        # characters of MariaDB's pci_devices columns: they report an
        # Intel 82599 PF/VF pair instead (its device_spec matches by address).
        from nova.virt import fake as fake_virt
        real = fake_virt.FakeDriverWithPciResources.get_available_resource

        def real_ids(driver_self, nodename):
            status = real(driver_self, nodename)
            devs = jsonutils.loads(status['pci_passthrough_devices'])
            for d in devs:
                d['vendor_id'] = '8086'
                d['product_id'] = '10fb' if d['dev_type'] == 'type-PF' \
                    else '10ed'
            status['pci_passthrough_devices'] = jsonutils.dumps(devs)
            return status
        self.useFixture(fixtures.MonkeyPatch(
            'nova.virt.fake.FakeDriverWithPciResources.get_available_resource',
            real_ids))
        super().setUp()
        self.notes = {}
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')
        self.compute2 = self._start_compute('host2')
        self.compute2_rp_uuid = self._get_provider_uuid_by_host('host2')
        self._create_networking_rp_tree('host2', self.compute2_rp_uuid)

    def _stop(self, host):
        self.computes[host].stop()
        self.__dict__.setdefault('_stopped', set()).add(host)

    def test_qos_bandwidth(self):
        # A server with a plain, a QoS (OVS bridge) and an SR-IOV QoS port
        # (PF) on host1, migrated to host2 and confirmed: its bandwidth moves
        # from host1's child providers to host2's.
        moved = self._create_server_with_ports(
            self.neutron.port_1, self.neutron.port_with_resource_request,
            self.neutron.port_with_sriov_resource_request)
        self.api.post_server_action(moved['id'], {'migrate': None})
        self._wait_for_state_change(moved, 'VERIFY_RESIZE')
        self._confirm_resize(moved)
        # host2 dies; the moved server is evacuated back to host1. host2's
        # tree keeps the instance's source allocations (compute root, OVS
        # bridge and PF children) until its nova-compute starts again.
        self._stop('host2')
        service = self.admin_api.get_services(
            host='host2', binary='nova-compute')[0]
        self.admin_api.put_service_force_down(service['id'], True)
        self._evacuate_server(moved, expected_host='host1')
        del self.computes['host2']
        self.notes['evacuated'] = {'server': moved['id']}
        self._run_periodics()
        self._dump()


class PciClouds(test_pci_in_placement.PlacementPCIReportingTests):
    """nova's PCI-in-placement base (Zed's [pci]report_in_placement): each
    PCI device nova may assign is a child provider of its compute node with
    one CUSTOM_PCI_<vendor>_<product> unit, which the resource tracker
    allocates to the instance holding the device."""

    PCI_DEVICE_SPEC = [jsonutils.dumps(
        {'vendor_id': fakelibvirt.PCI_VEND_ID,
         'product_id': fakelibvirt.PCI_PROD_ID})]

    _dump = driver.RealNovaClouds._dump
    _heartbeat = driver.RealNovaClouds._heartbeat
    _stop = driver.RealNovaClouds._stop
    _host_down = driver.RealNovaClouds._host_down

    def setUp(self):
        super().setUp()
        self.notes = {}
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')
        self.flags(group='pci', device_spec=self.PCI_DEVICE_SPEC)
        # The fake hypervisor keeps no disk files to copy on a move.
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.driver.LibvirtDriver'
            '.migrate_disk_and_power_off', return_value='{}'))

    def test_pci_placement(self):
        for host in ('host1', 'host2', 'host3'):
            self.start_compute(
                hostname=host, pci_info=fakelibvirt.HostPCIDevicesInfo(
                    num_pci=2, num_pfs=0, num_vfs=0))
        flavor = self._create_flavor(
            name='rn.pci', vcpu=1, memory_mb=512, disk=2,
            extra_spec={'pci_passthrough:alias': 'a-pci-dev:1'})
        plain = self._create_flavor(name='rn.plain', vcpu=1, memory_mb=512,
                                    disk=2)
        boot = (lambda f, host, name: self._create_server(
            name=name, flavor_id=f, host=host, networks='none'))
        moved = boot(flavor, 'host1', 'pci-moved')
        boot(flavor, 'host1', 'pci-stays')
        boot(plain, 'host2', 'plain')
        # Cold migrated to host2 and confirmed: its device and the
        # allocation of that device's provider move with it.
        self.admin_api.post_server_action(moved['id'],
                                          {'migrate': {'host': 'host2'}})
        self._wait_for_state_change(moved, 'VERIFY_RESIZE')
        self._confirm_resize(moved)
        gone = boot(flavor, 'host3', 'pci-deleted')
        self._delete_server(gone)
        # host3 dies with a PCI server on it; evacuated to host2, host3
        # never back: its root and the device's child provider keep the
        # instance's source allocations (the child holds only a custom
        # class: nova-manage placement audit never looks at it).
        victim = boot(flavor, 'host3', 'pci-evacuated')
        self._run_periodics()
        self._host_down('host3')
        # (ACTIVE named: nova 31's helper otherwise waits for SHUTOFF, the
        # 2.95 behaviour, which this base's API version does not ask for)
        self._evacuate_server(victim, extra_post_args={'host': 'host2'},
                              expected_host='host2', expected_state='ACTIVE')
        del self.computes['host3']
        self.notes['evacuated'] = {'server': victim['id']}
        self._run_periodics()
        self._dump()
