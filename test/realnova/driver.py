"""Scenarios that real nova plays in its own functional harness, then dumps.

Each test method of RealNovaClouds is one scenario: it drives the real API,
conductor, scheduler, libvirt-driver computes (on nova's fake libvirt) and a
real placement, then writes every row of nova_api, each cell database and
placement to the JSON file named by $REALNOVA_DUMP.

Run one scenario (the factory does this):
  REALNOVA_DUMP=/tmp/x.json /usr/bin/python3 -m testtools.run \
      driver.RealNovaClouds.test_healthy
"""
# eventlet patches first, as nova's own functional tests are (their package
# imports it before anything else): nova.context below brings oslo_context,
# whose thread-locals would otherwise be shared by every green thread. Nova
# 31's harness then loses a race a claim has with the API's reads ("Can't
# upgrade a READER transaction to a WRITER mid-transaction").
import nova.monkey_patch  # noqa: F401,I100

import base64
import copy
import datetime
import decimal
import json
import os

from lxml import etree
import fixtures
from oslo_utils.fixture import uuidsentinel as uuids
import sqlalchemy as sa

from nova import context as nova_context
from nova.db.api import api as api_db
from nova.db.main import api as main_db
from nova import objects
from nova.tests import fixtures as nova_fixtures
from nova.tests.fixtures import libvirt as fakelibvirt
from nova.tests.functional.libvirt import base
from placement import db_api as placement_db


def _plain(value):
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat(sep=' ')
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {'$base64': base64.b64encode(bytes(value)).decode()}
    return value


def _rows(engine):
    """Every table of one sqlite database, by column name, raw as stored."""
    out = {}
    with engine.connect() as conn:
        for table in sa.inspect(conn).get_table_names():
            if table.startswith('alembic_version') or table == 'migrate_version':
                continue
            result = conn.exec_driver_sql('SELECT * FROM "%s"' % table)
            cols = list(result.keys())
            out[table] = {
                'columns': cols,
                'rows': [[_plain(v) for v in row] for row in result],
            }
    return out


class RealNovaClouds(base.ServersTestBase):
    """Every compute is a libvirt compute on nova's fake libvirt."""

    NUMBER_OF_CELLS = 2
    ADMIN_API = True
    microversion = 'latest'
    ADDITIONAL_FILTERS = ['NUMATopologyFilter']

    def setUp(self):
        super().setUp()
        # Live migrations complete in the fake hypervisor only when the
        # destination domain is defined and the source job is marked done.
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.migrateToURI3',
            self._finish_live_migration))
        self.hold_live_migrations = False
        self.notes = {}
        self.flags(instances=-1, cores=-1, ram=-1, group='quota')
        # Progress figures of a running live migration are saved from a
        # green thread that shares the request context of a caller still
        # inside a reader transaction in this harness; the figures
        # (migrations.memory_*/disk_*) are nothing cloudctl reads.
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.migration.save_stats'))
        # The fake hypervisor keeps no disk files to copy on a resize.
        self.useFixture(fixtures.MockPatch(
            'nova.virt.libvirt.driver.LibvirtDriver'
            '.migrate_disk_and_power_off', return_value='{}'))
        self.flags(cpu_dedicated_set='0-3,6-9', cpu_shared_set='4-5,10-11',
                   group='compute')

    # ------------------------------------------------------------ helpers

    def _finish_live_migration(self, domain, destination, params, flags):
        server = etree.fromstring(
            params['destination_xml']).find('./uuid').text
        dest = self.computes[self._live_dest or
                             destination.split('//')[1].split('/')[0]]
        dest.driver._host.get_connection().createXML(
            params['destination_xml'], 'realnova')
        if self.hold_live_migrations:
            # The job stays running: nova keeps polling it.
            return
        src = self.computes[self._live_src]
        src.driver._host.get_connection().lookupByUUIDString(
            server).complete_job()

    def _host_info(self):
        return fakelibvirt.HostInfo(
            cpu_nodes=2, cpu_sockets=1, cpu_cores=3, cpu_threads=2)

    def _computes(self, cells):
        for cell, hosts in cells.items():
            for host in hosts:
                self.start_compute(host, host_info=self._host_info(),
                                   cell_name=cell)

    def _flavors(self):
        self.small = self._create_flavor(
            name='rn.small', vcpu=1, memory_mb=512, disk=2, ephemeral=0)
        self.medium = self._create_flavor(
            name='rn.medium', vcpu=2, memory_mb=1024, disk=4, ephemeral=0)
        self.large = self._create_flavor(
            name='rn.large', vcpu=2, memory_mb=2048, disk=4, ephemeral=0)
        self.pinned = self._create_flavor(
            name='rn.pinned', vcpu=2, memory_mb=1024, disk=2, ephemeral=0,
            extra_spec={'hw:cpu_policy': 'dedicated'})
        self.pinned_big = self._create_flavor(
            name='rn.pinned-big', vcpu=4, memory_mb=2048, disk=2,
            ephemeral=0, extra_spec={'hw:cpu_policy': 'dedicated'})

    def _boot(self, flavor, host=None, name=None, **kw):
        return self._create_server(
            name=name, flavor_id=flavor, host=host, networks='none', **kw)

    def _host_of(self, server):
        return self.api.get_server(server['id'])['OS-EXT-SRV-ATTR:host']

    def _live_migrate_to(self, server, dest=None, expect='completed'):
        self._live_src = self._host_of(server)
        self._live_dest = dest
        self.api.post_server_action(server['id'], {
            'os-migrateLive': {'host': dest, 'block_migration': 'auto'}})
        self._wait_for_migration_status(server, [expect])

    def _aggregates(self):
        az1 = self._create_aggregate('agg-az1', availability_zone='az1')
        for host in ('host1', 'host2'):
            self.api.post_aggregate_action(
                az1, {'add_host': {'host': host}})
        fast = self._create_aggregate('agg-fast')
        self.api.post_aggregate_action(fast, {'add_host': {'host': 'host3'}})
        self.api.post_aggregate_action(
            fast, {'set_metadata': {'metadata': {'ssd': 'true'}}})
        return az1, fast

    def _stop(self, host):
        self.computes[host].stop()
        self.__dict__.setdefault('_stopped', set()).add(host)

    def _heartbeat(self):
        """Every compute service still running reports once more, as its
        servicegroup timer does each report_interval: a play slowed down by a
        busy machine must not dump a running service as one that stopped
        reporting (the factory keeps each heartbeat's age)."""
        stopped = self.__dict__.get('_stopped', set())
        for host, service in self.computes.items():
            if host not in stopped:
                service.servicegroup_api._driver._report_state(service)

    def _dump(self):
        target = os.environ.get('REALNOVA_DUMP')
        if not target:
            return
        self._heartbeat()
        ctxt = nova_context.get_admin_context()
        cells = {}
        for mapping in objects.CellMappingList.get_all(ctxt):
            with nova_context.target_cell(ctxt, mapping) as cctxt:
                engine = main_db.get_context_manager(
                    cctxt).writer.get_engine()
                cells[mapping.uuid] = {'name': mapping.name,
                                       'tables': _rows(engine)}
        doc = {
            # What the play observed on the real services (e.g. a fault).
            'notes': self.notes,
            # The factory ages heartbeats relative to this instant.
            'dumped_at': datetime.datetime.utcnow().isoformat(sep=' '),
            'api': _rows(api_db.context_manager.writer.get_engine()),
            'cells': cells,
            'placement': _rows(
                placement_db.placement_context_manager.writer.get_engine()),
        }
        tmp = target + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(doc, f)
        os.replace(tmp, target)

    def _stall_resource_tracker(self, host):
        """Seed 004: update_available_resource stops running on the host
        (hung) while the service keeps its heartbeat."""
        self.computes[host].manager.update_available_resource = (
            lambda *a, **kw: None)

    def _host_down(self, host):
        self._stop(host)
        service = self.admin_api.get_services(
            host=host, binary='nova-compute')[0]
        self.admin_api.put_service_force_down(service['id'], True)
        return service

    def _healthy_base(self):
        self._computes({'cell1': ['host1', 'host2', 'host3'],
                        'cell2': ['host4']})
        self._flavors()
        self._aggregates()

    # ------------------------------------------------------------ scenarios

    def test_healthy(self):
        self._healthy_base()
        group = self.api.post_server_groups(
            {'name': 'spread', 'policy': 'anti-affinity'})
        a = self._boot(self.small, host='host1', name='a')
        b = self._boot(self.medium, host='host2', name='b')
        p1 = self._boot(self.pinned, host='host1', name='p1')
        p2 = self._boot(self.pinned, host='host3', name='p2')
        self._boot(self.pinned_big, host='host2', name='p3')
        self._boot(self.small, name='az', az='az1')
        for i in range(2):
            body = self._build_server(name='g%d' % i, flavor_id=self.small,
                                      networks='none')
            server = self.api.post_server(
                {'server': body,
                 'os:scheduler_hints': {'group': group['id']}})
            self._wait_for_state_change(server, 'ACTIVE')
        # A server in the second cell.
        self._boot(self.small, host='host4', name='c2')

        # Resize confirmed and reverted, pinned and not.
        self._resize_server(a, self.medium)
        self._confirm_resize(a)
        self._resize_server(b, self.large)
        self._revert_resize(b)
        self._resize_server(p1, self.pinned_big)
        self._confirm_resize(p1)
        # Cold migration, then a live migration.
        self._migrate_server(p2)
        self._confirm_resize(p2)
        self._live_migrate_to(b)
        # Shelve / unshelve / offload.
        s = self._boot(self.small, host='host3', name='shelved')
        self._shelve_server(s, expected_state='SHELVED_OFFLOADED')
        self._unshelve_server(s)
        # Shelved first on its host, then offloaded by the operator.
        self.flags(shelved_offload_time=-1)
        s2 = self._boot(self.small, host='host2', name='offloaded')
        self._shelve_server(s2, expected_state='SHELVED')
        self._shelve_offload_server(s2)
        self.flags(shelved_offload_time=0)
        # Deletes.
        gone = self._boot(self.medium, host='host3', name='gone')
        self._delete_server(gone)
        gone_pinned = self._boot(self.pinned, host='host2', name='gone-p')
        self._delete_server(gone_pinned)
        self._run_periodics()
        self._dump()

    def test_in_flight(self):
        self._healthy_base()
        self.flags(allow_resize_to_same_host=True)
        moving = self._boot(self.medium, host='host1', name='resize-away')
        self._resize_server(moving, self.large)
        # cell2 has a single compute: its resize stays on that host.
        same = self._boot(self.small, host='host4', name='resize-same')
        self._resize_server(same, self.medium)
        pinned = self._boot(self.pinned, host='host2', name='resize-pinned')
        self._resize_server(pinned, self.pinned_big)
        live = self._boot(self.small, host='host3', name='live')
        self.hold_live_migrations = True
        # nova 34's fake domain starts with no job (older ones: a job
        # running until complete_job()); nova's monitor reads no job on a
        # domain still on the source as an aborted migration. The held
        # migration's job reads as running until the play completes it.
        held = live['id']
        job_stats = fakelibvirt.Domain.jobStats

        def running_until_completed(domain, flags=0):
            stats = job_stats(domain, flags)
            if (domain.UUIDString() == held and
                    stats['type'] == fakelibvirt.VIR_DOMAIN_JOB_NONE):
                return dict(stats, type=fakelibvirt.VIR_DOMAIN_JOB_UNBOUNDED)
            return stats
        self.useFixture(fixtures.MonkeyPatch(
            'nova.tests.fixtures.libvirt.Domain.jobStats',
            running_until_completed))
        self._live_migrate_to(live, 'host2', expect='running')
        self._run_periodics()
        self._dump()
        # Newer harnesses (nova 31's GreenThreadPoolShutdownWait) wait at
        # tear-down for the live migration's thread: once the rows are
        # dumped, its job completes.
        self.computes['host3'].driver._host.get_connection() \
            .lookupByUUIDString(live['id']).complete_job()
        self._wait_for_migration_status(live, ['completed'])

    def test_evacuated_host_down(self):
        # LP 1679750: the source host died and never came back.
        self._healthy_base()
        victim = self._boot(self.small, host='host1', name='evacuated')
        pinned = self._boot(self.pinned, host='host1', name='evacuated-p')
        self._boot(self.small, host='host2', name='bystander')
        self._stop('host1')
        service = self.admin_api.get_services(
            host='host1', binary='nova-compute')[0]
        self.admin_api.put_service_force_down(service['id'], True)
        self._evacuate_server(victim, expected_host=None)
        self._evacuate_server(pinned, expected_host=None)
        del self.computes['host1']
        self._run_periodics()
        self._dump()

    def test_deleted_while_down(self):
        # Servers deleted through the API while their compute is down: the
        # API deletes locally (instance row and placement allocations); the
        # dead host's own row still counts them until nova-compute starts.
        self._healthy_base()
        gone = self._boot(self.small, host='host2', name='gone')
        gone_p = self._boot(self.pinned, host='host2', name='gone-p')
        self._boot(self.small, host='host2', name='stays')
        self._host_down('host2')
        self._delete_server(gone)
        self._delete_server(gone_p)
        del self.computes['host2']
        self._run_periodics()
        self._dump()

    def test_service_deleted(self):
        # A dead host decommissioned with its servers still on it. Zed's API
        # answers 409 while instances are there; older releases (and a delete
        # racing a boot) did not look: the count is skipped as they did. The
        # cascade then sends DELETE /allocations/('<uuid>',) (Debian 26.2.2:
        # SQLAlchemy 1.4 rows, 404), placement refuses to drop a provider
        # still in use, and the provider stays with its allocations.
        self._healthy_base()
        self._boot(self.small, host='host2', name='orphan')
        self._boot(self.pinned, host='host2', name='orphan-p')
        self._boot(self.small, host='host1', name='bystander')
        service = self._host_down('host2')
        self.useFixture(fixtures.MockPatch(
            'nova.objects.InstanceList.get_count_by_hosts', return_value=0))
        # Newer APIs (nova 31) also refuse to take a host with instances out
        # of its AZ aggregate, which the service delete does: skipped alike.
        from nova.compute import api as compute_api
        check = 'ensure_no_instances_need_to_move_az_when_host_removed'
        if hasattr(compute_api.AggregateAPI, check):
            self.useFixture(fixtures.MockPatch(
                'nova.compute.api.AggregateAPI.' + check))
        self.admin_api.api_delete('/os-services/%s' % service['id'])
        del self.computes['host2']
        self._run_periodics()
        self._dump()

    def test_hostname_change(self):
        # host3's hypervisor hostname becomes its FQDN ([DEFAULT] host is
        # set and stays). On restart the driver reports a new node: a new
        # compute node (new uuid) and a new provider named by the FQDN; the
        # old node is an orphan the resource tracker deletes, but the cascade
        # of its provider fails (the 404 above) and the provider 'host3' stays
        # with the allocations of the servers still recorded on node 'host3'.
        self._healthy_base()
        self._boot(self.small, host='host3', name='before-rename')
        self._boot(self.pinned, host='host3', name='before-rename-p')
        self._boot(self.small, host='host1', name='bystander')
        conn = self.computes['host3'].driver._host.get_connection()
        conn.hostname = 'host3.example.com'
        from nova import exception
        try:
            self.restart_compute_service('host3')
        except exception.InvalidConfiguration as e:
            # Stable compute node uuids (nova 27+): nova-compute finds its
            # node under another name and refuses to start. Nothing is
            # renamed; host3's service stops reporting (the harness has
            # already stopped and dropped it).
            if 'rename detected' not in str(e):
                raise
            self.notes['rename'] = {'refused': str(e)}
        self._run_periodics()
        self._dump()

    def _delete_while_forced_down(self, host, servers):
        """The operator forces host's service down (it looked dead), servers
        there are deleted locally by the API (rows and allocations), then the
        service is back up; the host's periodic update_available_resource is
        hung (seed 004), so its row never learns about the deletes."""
        # The row matches its instances first (a fresh play on a busy machine
        # once dumped a row that missed the last boot's pins): the incident is
        # then only what the stalled tracker misses.
        self._run_periodics()
        self._stall_resource_tracker(host)
        service = self.admin_api.get_services(
            host=host, binary='nova-compute')[0]
        self.admin_api.put_service_force_down(service['id'], True)
        for server in servers:
            self._delete_server(server)
        self.admin_api.put_service_force_down(service['id'], False)

    def test_pinned_leak(self):
        # Seed 004: pinned_cpus stays full on a host that is up and reporting.
        self._healthy_base()
        victims = [self._boot(self.pinned_big, host='host2', name='gone-p'),
                   self._boot(self.pinned, host='host2', name='gone-p2')]
        self._boot(self.pinned, host='host2', name='stays-p')
        self._delete_while_forced_down('host2', victims)
        self._run_periodics()
        # The fault blocks the boot on the real scheduler: placement has the
        # PCPUs (the deletes freed them) but the node's pinned_cpus is full,
        # so NUMATopologyFilter rejects host2 and the server is buried in
        # cell0. The test then expects cloudctl's simulation to agree before
        # the repair and to place it on host2 after.
        blocked = self._create_server(
            name='blocked-p', flavor_id=self.pinned, host='host2',
            networks='none', expected_state='ERROR')
        fault = self.api.get_server(blocked['id'])['fault']['message']
        self.assertIn('No valid host', fault)
        from nova import conf as nova_conf
        self.notes['blocked_boot'] = {
            'flavor': 'rn.pinned', 'host': 'host2', 'server': blocked['id'],
            'fault': fault,
            # The scheduler's filters in this play, for the simulation.
            'enabled_filters': list(
                nova_conf.CONF.filter_scheduler.enabled_filters)}
        self._dump()

    def test_cell0_duplicate(self):
        # Seed 004 ("No server with a name or ID"): the instance is buried in
        # cell0 in ERROR with NoValidHost and a copy of it is ACTIVE in cell1;
        # its mapping points at cell0. The cause is a schedule_and_build
        # message delivered twice: one conductor built the server in cell1
        # while the other's scheduling failed and buried it. Zed checks the
        # mapping before burying, so the harness replays the second delivery
        # through the conductor's own _bury_in_cell0 with the mapping as that
        # conductor read it (before the first one mapped the server); the
        # NoValidHost is raised by the replay, not by a scheduler run.
        self._healthy_base()
        from nova.conductor import manager as conductor_manager
        delivered = []
        original = conductor_manager.ComputeTaskManager \
            .schedule_and_build_instances

        def record(mgr, context, build_requests, request_specs, image,
                   admin_password, injected_files, requested_networks,
                   block_device_mapping, tags=None):
            # The whole message, as a second delivery would carry it: the
            # block device mappings and tags are buried with the instance.
            delivered.append((build_requests[0].obj_clone(),
                              request_specs[0].obj_clone(),
                              copy.deepcopy(block_device_mapping),
                              copy.deepcopy(tags)))
            return original(mgr, context, build_requests, request_specs,
                            image, admin_password, injected_files,
                            requested_networks, block_device_mapping,
                            tags=tags)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.conductor.manager.ComputeTaskManager'
            '.schedule_and_build_instances', record))
        # Tagged at boot (2.52): nova writes the tags in each cell that
        # gets a copy, so the cell0 copy has rows in every table that
        # instance_destroy cleans up, tags included.
        body = self._build_server(name='twin', flavor_id=self.small,
                                  networks='none', host='host2')
        body['tags'] = ['seed004', 'web']
        twin = self._wait_for_state_change(
            self.admin_api.post_server({'server': body}), 'ACTIVE')
        self._boot(self.small, host='host1', name='bystander')
        build_request, request_spec, bdms, tags = delivered[0]
        ctxt = nova_context.get_admin_context()
        stale = objects.InstanceMapping.get_by_instance_uuid(ctxt, twin['id'])
        stale.cell_mapping = None
        stale.obj_reset_changes(['cell_mapping'])
        from nova import exception
        with fixtures.MonkeyPatch(
                'nova.objects.InstanceMapping.get_by_instance_uuid',
                lambda *a, **kw: stale):
            # Raised, as the scheduler client does: the fault notification
            # reads the traceback.
            try:
                raise exception.NoValidHost(
                    reason='There are not enough hosts available.')
            except exception.NoValidHost as exc:
                self.conductor.manager.compute_task_mgr._bury_in_cell0(
                    ctxt, request_spec, exc,
                    instances=[build_request.get_new_instance(ctxt)],
                    block_device_mapping=bdms, tags=tags)
        # The API now answers from cell0: the ERROR copy, not the live one.
        seen = self.api.get_server(twin['id'])
        self.assertEqual('ERROR', seen['status'])
        self.notes['duplicate'] = {'server': twin['id'],
                                   'api_status': seen['status'],
                                   'fault': seen['fault']['message']}
        self._run_periodics()
        self._dump()

    def test_usage_drift(self):
        # Seed 000 ("Free VCPUS: -90"): the row of an up host still counts
        # servers that are gone.
        self._healthy_base()
        victims = [self._boot(self.large, host='host1', name='v%d' % i)
                   for i in range(3)]
        self._boot(self.small, host='host1', name='stays')
        self._delete_while_forced_down('host1', victims)
        self._run_periodics()
        self._dump()
