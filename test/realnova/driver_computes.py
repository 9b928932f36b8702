"""Scenarios on the other kinds of compute a cloud runs, played by nova's
own functional harness and dumped like driver.py's.

ComputeClouds is a subclass of nova's ProviderUsageBaseTestCase (the base of
nova's own cross-cell, soft-delete and placement-conflict functional tests):
the real API, conductor, scheduler and placement, computes on nova's fake
virt driver (fake.MediumFakeDriver), two cells. Rows are dumped with
driver.py's _dump (same format, same factory).

Baremetal: nova's ironic driver needs an ironic API (openstacksdk) to spawn,
so the baremetal computes run FakeIronicDriver: nova's fake driver for the
guest side, and the ironic driver's own code (nova.virt.ironic.driver
IronicDriver.update_provider_tree, get_available_resource, _node_resource,
_node_resources_used/_unavailable) for everything the resource tracker and
placement get from a node: one compute node per ironic node (uuid and
hypervisor_hostname the node's uuid, hypervisor_type 'ironic', 0 vcpus /
memory / disk), one provider per node with one unit of the node's custom
resource class, reserved while an instance is on it
([workarounds]skip_reserve_in_use_ironic_nodes False). The node objects are
the play's (what ironic would answer): spawn puts the instance on the node
and makes it active, destroy takes it off and (no automated cleaning) makes
it available.

Run one scenario (the factory does this):
  REALNOVA_DUMP=/tmp/x.json /usr/bin/python3 -m testtools.run \
      driver_computes.ComputeClouds.test_baremetal
"""
# eventlet first, as in driver.py.
import nova.monkey_patch  # noqa: F401,I100

import sys
import time
import types
from unittest import mock

from keystoneauth1 import adapter as ks_adapter
from oslo_serialization import jsonutils
from oslo_utils.fixture import uuidsentinel as uuids

from nova import context as nova_context
from nova import objects
from nova.policies import base as base_policies
from nova.policies import servers as servers_policies
from nova.tests import fixtures as nova_fixtures
from nova.tests.functional import integrated_helpers
from nova.tests.unit import fake_requests
from nova.virt import fake
from nova.virt.ironic import driver as ironic_driver

from driver import RealNovaClouds

IRONIC = ironic_driver.IronicDriver


class FakeIronicDriver(fake.FakeDriver):
    """Several ironic nodes per nova-compute; what the resource tracker and
    placement learn about a node is computed by IronicDriver's own methods
    from node objects the play keeps (NODES, by service host)."""

    # Filled by the play before the service starts: host -> [node, ...].
    NODES = {}

    # nova.virt.ironic.driver.IronicDriver's, unchanged.
    update_provider_tree = IRONIC.update_provider_tree
    get_available_resource = IRONIC.get_available_resource
    _node_from_cache = IRONIC._node_from_cache
    _node_resource = IRONIC._node_resource
    _parse_node_properties = IRONIC._parse_node_properties
    _node_resources_used = IRONIC._node_resources_used
    _node_resources_unavailable = IRONIC._node_resources_unavailable
    rebalances_nodes = True

    def __init__(self, virtapi, read_only=False):
        super().__init__(virtapi, read_only)
        self.node_cache = {}
        self.node_cache_time = time.time()

    def _get_hypervisor_type(self):
        return 'ironic'

    def _get_hypervisor_version(self):
        return 1

    def _refresh_cache(self):
        self.node_cache = {n.uuid: n for n in self.NODES.get(self._host, [])}
        self.node_cache_time = time.time()

    def init_host(self, host):
        super().init_host(host)
        self._refresh_cache()
        self._nodes = list(self.node_cache)

    def get_available_nodes(self, refresh=False):
        return list(self.node_cache)

    def get_nodenames_by_uuid(self, refresh=False):
        # (nova 27+ asks for it: an ironic node's compute node uuid is its
        # name, as IronicDriver.get_nodenames_by_uuid answers.)
        nodes = self.get_available_nodes(refresh=refresh)
        return dict(zip(nodes, nodes))

    def node_is_available(self, nodename):
        return nodename in self.node_cache

    def spawn(self, context, instance, image_meta, injected_files,
              admin_password, allocations, network_info=None,
              block_device_info=None, power_on=True, accel_info=None):
        node = self.node_cache[instance.node]
        node.instance_uuid = node.instance_id = instance.uuid
        node.provision_state = 'active'
        node.power_state = 'power on'
        super().spawn(context, instance, image_meta, injected_files,
                      admin_password, allocations, network_info,
                      block_device_info, power_on, accel_info)

    def destroy(self, context, instance, network_info, block_device_info=None,
                destroy_disks=True, destroy_secrets=True):
        node = self.node_cache.get(instance.node)
        if node is not None and node.instance_uuid == instance.uuid:
            node.instance_uuid = node.instance_id = None
            # No automated cleaning: the node is available again at once.
            node.provision_state = 'available'
            node.power_state = 'power off'
        super().destroy(context, instance, network_info, block_device_info,
                        destroy_disks, destroy_secrets)


# nova loads its compute driver from nova.virt (load_compute_driver imports
# 'nova.virt.' + [DEFAULT]compute_driver): the class is registered there.
_VIRT = types.ModuleType('nova.virt.realnova_ironic')
_VIRT.FakeIronicDriver = FakeIronicDriver
sys.modules[_VIRT.__name__] = _VIRT


def ironic_node(uuid, resource_class):
    """An ironic node as the API (openstacksdk) shows it to nova: Zed's
    driver reads uuid / instance_uuid / maintenance, nova 31's the SDK's
    names id / instance_id / is_maintenance."""
    return types.SimpleNamespace(
        uuid=uuid, id=uuid, instance_uuid=None, instance_id=None,
        provision_state='available', power_state='power off',
        maintenance=False, is_maintenance=False,
        resource_class=resource_class,
        properties={'cpu_arch': 'x86_64', 'cpus': 8, 'memory_mb': 16384,
                    'local_gb': 100},
        traits=[])


class ComputeClouds(integrated_helpers.ProviderUsageBaseTestCase):

    NUMBER_OF_CELLS = 2
    compute_driver = 'fake.MediumFakeDriver'

    _dump = RealNovaClouds._dump
    _heartbeat = RealNovaClouds._heartbeat

    def setUp(self):
        super().setUp()
        self.notes = {}
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')
        self.cinder = self.useFixture(nova_fixtures.CinderFixture(self))
        self.flags(rpc_response_timeout=10)
        self.flags(long_rpc_timeout=60)

    def _boot(self, flavor, host=None, name=None, **kw):
        return self._create_server(
            name=name, flavor_id=flavor, host=host, networks='none', **kw)

    def _host_of(self, server):
        return self.api.get_server(server['id'])['OS-EXT-SRV-ATTR:host']

    # ------------------------------------------------------------ scenarios

    def test_baremetal(self):
        # Two nova-compute services with the ironic driver, three nodes each
        # (one compute node and one provider per node), in cell1; flavors as
        # ironic operators write them (the custom class only).
        FakeIronicDriver.NODES = {
            'ironic1': [ironic_node(uuids.bm1a, 'baremetal-gold'),
                        ironic_node(uuids.bm1b, 'baremetal-gold'),
                        ironic_node(uuids.bm1c, 'baremetal-silver')],
            'ironic2': [ironic_node(uuids.bm2a, 'baremetal-gold'),
                        ironic_node(uuids.bm2b, 'baremetal-silver'),
                        ironic_node(uuids.bm2c, 'baremetal-silver')],
        }
        self.flags(compute_driver='realnova_ironic.FakeIronicDriver')
        for host in ('ironic1', 'ironic2'):
            self._start_compute(host, cell_name='cell1')
        zero = {'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
                'resources:DISK_GB': '0'}
        gold = self._create_flavor(
            name='bm.gold', vcpu=8, memory_mb=16384, disk=100,
            extra_spec=dict(zero, **{'resources:CUSTOM_BAREMETAL_GOLD': '1'}))
        silver = self._create_flavor(
            name='bm.silver', vcpu=8, memory_mb=16384, disk=100,
            extra_spec=dict(
                zero, **{'resources:CUSTOM_BAREMETAL_SILVER': '1'}))
        self._boot(gold, host='ironic1', name='bm-gold-1')
        self._boot(gold, host='ironic1', name='bm-gold-2')
        self._boot(silver, host='ironic2', name='bm-silver-1')
        gone = self._boot(silver, host='ironic2', name='bm-silver-gone')
        self._delete_server(gone)
        # A rebuild keeps the node (ironic redeploys it in place).
        rebuilt = self._boot(gold, host='ironic2', name='bm-rebuilt')
        self._rebuild_server(rebuilt, self.glance.image2['id'])
        self._run_periodics()
        self.notes['baremetal'] = {
            'nodes': {h: [n.uuid for n in ns]
                      for h, ns in FakeIronicDriver.NODES.items()},
            'used': sorted(n.uuid for ns in FakeIronicDriver.NODES.values()
                           for n in ns if n.instance_uuid)}
        self._dump()

    def _cross_cell_base(self):
        # nova's TestMultiCellMigrate: one host per cell, cross-cell resize
        # allowed to admins by policy; the only other host is in the other
        # cell, so every resize there is a cross-cell one.
        self.policy.set_rules({
            servers_policies.CROSS_CELL_RESIZE: base_policies.RULE_ADMIN_API},
            overwrite=False)
        self.flags(allow_resize_to_same_host=False)
        self._start_compute('host1', cell_name='cell1')
        self._start_compute('host2', cell_name='cell2')
        self.small = self._create_flavor(
            name='cc.small', vcpu=1, memory_mb=512, disk=2)
        self.large = self._create_flavor(
            name='cc.large', vcpu=2, memory_mb=1024, disk=4)

    def test_cross_cell_resize(self):
        self._cross_cell_base()
        confirmed = self._boot(self.small, host='host1', name='cc-confirmed')
        reverted = self._boot(self.small, host='host1', name='cc-reverted')
        pending = self._boot(self.small, host='host1', name='cc-pending')
        self._boot(self.small, host='host2', name='cc-bystander')
        for server in (confirmed, reverted, pending):
            self._resize_server(server, self.large)
            self.assertEqual('host2', self._host_of(server))
        self._confirm_resize(confirmed, cross_cell=True)
        self.api.post_server_action(reverted['id'], {'revertResize': None})
        self._wait_for_state_change(reverted, 'ACTIVE')
        self._wait_for_migration_status(reverted, ['reverted'])
        self.assertEqual('host1', self._host_of(reverted))
        self._run_periodics()
        self.notes['cross_cell'] = {'confirmed': confirmed['id'],
                                    'reverted': reverted['id'],
                                    'pending': pending['id']}
        self._dump()

    def test_lifecycle(self):
        # Soft delete and restore, a server left soft-deleted, shelve /
        # offload / unshelve, a server left offloaded, a rebuild.
        self._start_compute('host1', cell_name='cell1')
        self._start_compute('host2', cell_name='cell1')
        self._start_compute('host3', cell_name='cell2')
        small = self._create_flavor(name='lc.small', vcpu=1, memory_mb=512,
                                    disk=2)
        self.flags(reclaim_instance_interval=3600)
        restored = self._boot(small, host='host1', name='restored')
        self.api.delete_server(restored['id'])
        self._wait_for_state_change(restored, 'SOFT_DELETED')
        self.api.post_server_action(restored['id'], {'restore': {}})
        self._wait_for_state_change(restored, 'ACTIVE')
        soft = self._boot(small, host='host2', name='soft-deleted')
        self.api.delete_server(soft['id'])
        self._wait_for_state_change(soft, 'SOFT_DELETED')
        soft3 = self._boot(small, host='host3', name='soft-deleted-c2')
        self.api.delete_server(soft3['id'])
        self._wait_for_state_change(soft3, 'SOFT_DELETED')
        self.flags(shelved_offload_time=0)
        unshelved = self._boot(small, host='host1', name='unshelved')
        self._shelve_server(unshelved, expected_state='SHELVED_OFFLOADED')
        self._unshelve_server(unshelved)
        offloaded = self._boot(small, host='host2', name='offloaded')
        self._shelve_server(offloaded, expected_state='SHELVED_OFFLOADED')
        self.flags(shelved_offload_time=-1)
        shelved = self._boot(small, host='host3', name='shelved')
        self._shelve_server(shelved, expected_state='SHELVED')
        rebuilt = self._boot(small, host='host2', name='rebuilt')
        self._rebuild_server(rebuilt, self.glance.image2['id'])
        self._run_periodics()
        self.notes['lifecycle'] = {'soft_deleted': [soft['id'], soft3['id']],
                                   'offloaded': offloaded['id'],
                                   'shelved': shelved['id']}
        self._dump()

    def test_migration_leak(self):
        # nova's ConsumerGenerationConflictTest
        # .test_confirm_migrate_delete_alloc_on_source_fails: placement
        # answers 409 when the confirm removes the migration's allocation on
        # the source; the server goes to ERROR and is deleted, nova
        # soft-deletes the migration row with it and the allocation the
        # migration consumer holds on host1 is left (nova logs it as leaked).
        self._start_compute('host1', cell_name='cell1')
        self._start_compute('host2', cell_name='cell1')
        self._start_compute('host3', cell_name='cell2')
        small = self._create_flavor(name='ml.small', vcpu=1, memory_mb=512,
                                    disk=2)
        server = self._boot(small, host='host1', name='leaker')
        self._boot(small, host='host1', name='bystander')
        self._migrate_server(server, host='host2')
        self._wait_for_state_change(server, 'VERIFY_RESIZE')
        conflict = fake_requests.FakeResponse(409, jsonutils.dumps(
            {'errors': [{'code': 'placement.concurrent_update',
                         'detail': 'consumer generation conflict'}]}))
        with mock.patch.object(ks_adapter.Adapter, 'put', autospec=True,
                               return_value=conflict):
            self.api.post_server_action(server['id'], {'confirmResize': None})
            self._wait_for_state_change(server, 'ERROR')
        migration = self.api.get_migrations()[0]
        self.assertEqual('error', migration['status'])
        # (_delete_server fails on a server already in ERROR.)
        self.api.delete_server(server['id'])
        self.notifier.wait_for_versioned_notifications('instance.delete.end')
        leaked = self._get_allocations_by_server_uuid(migration['uuid'])
        self.assertEqual(1, len(leaked))
        self.assertIn('the allocation held by the migration is leaked',
                      self.stdlog.logger.output)
        ctxt = nova_context.get_admin_context()
        self.assertEqual(
            0, len(objects.MigrationList.get_by_filters(
                ctxt, {'uuid': migration['uuid']})))
        self._run_periodics()
        self.notes['leak'] = {'migration': migration['uuid'],
                              'server': server['id'],
                              'provider': list(leaked)[0]}
        self._dump()
