"""Boots that real nova is in the middle of, held where the data is in flight.

One scenario (BootWindows.test_held): the servers below are held by the play
at the point named, every row is dumped while they are held (driver.py's
_dump, same format and cache as driver.py's scenarios), then everything is
let go and every server goes ACTIVE, so the harness tears down cleanly.

- held-conductor (host3): the conductor created the instance in cell1
  (building/scheduling, no host) and is held before _map_instance_to_cell:
  the mapping has no cell, the build request is still there, placement holds
  the scheduler's allocations (issue 25 item 1, phase 2).
- held-claim (host1): mapped, build request gone, nova-compute's
  _do_build_and_run_instance saved building/task None and is held before
  ResourceTracker.instance_claim: host and node still NULL (phase 3).
- queued (host1): the same host's max_concurrent_builds (1) is taken by
  held-claim, so its build waits for the semaphore: building/scheduling, no
  host (phase 3, queued).
- rescheduled (az rz: host2 + host3): its first build fails with
  RescheduledException; nova-compute clears host/node, deletes the
  allocations and the conductor claims on the alternate, whose claim is held:
  no host, allocations on the alternate.
- claiming (host4, cell2): held inside the claim, after the resource tracker
  set host and node (its lock is held): building with a host.
- unshelving: shelved and offloaded, then unshelved; held before the
  destination's claim: shelved_offloaded/spawning, no host, the scheduler's
  allocations on the destination.
- active (host1): an ordinary server, for contrast.

Run: REALNOVA_DUMP=/tmp/x.json /usr/bin/python3 -m testtools.run \
    boot_windows.BootWindows.test_held
"""
# eventlet first, as in driver.py.
import nova.monkey_patch  # noqa: F401,I100

import eventlet
from eventlet import event as eventlet_event
import fixtures

from nova.compute import manager as compute_manager
from nova.compute import resource_tracker
from nova.conductor import manager as conductor_manager
from nova import context as nova_context
from nova import exception
from nova import objects

from driver import RealNovaClouds

#: Seconds the play waits for a server to reach the point it is held at.
REACH_TIMEOUT = 120


class BootWindows(RealNovaClouds):

    def setUp(self):
        super().setUp()
        # Reached: name -> Event sent when the server's green thread is held.
        self.reached = {}
        self.release = eventlet_event.Event()
        self.failed_once = set()

    # ------------------------------------------------------------ holds

    def _hold(self, instance, where):
        """Called on the service's own green thread: records where the server
        stopped and waits until the play lets everything go."""
        name = instance.display_name
        self.notes.setdefault('held', {})[name] = {
            'uuid': instance.uuid, 'where': where}
        reached = self.reached.setdefault(name, eventlet_event.Event())
        if not reached.ready():
            reached.send(where)
        self.release.wait()

    def _let_go(self):
        if not self.release.ready():
            self.release.send()

    def _wait_reached(self, name):
        ev = self.reached.setdefault(name, eventlet_event.Event())
        with eventlet.Timeout(REACH_TIMEOUT):
            return ev.wait()

    def _install_holds(self, conductor_names, before_claim, in_claim,
                       reschedule):
        map_to_cell = conductor_manager.ComputeTaskManager \
            ._map_instance_to_cell
        play = self
        # Whatever happens to the play, the held threads go before the
        # services stop (cleanups run last-in first): tear-down waits for them.
        self.addCleanup(self._let_go)

        def held_map(context, instance, cell):
            if instance.display_name in conductor_names:
                play._hold(instance,
                           'conductor before _map_instance_to_cell')
            return map_to_cell(context, instance, cell)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.conductor.manager.ComputeTaskManager._map_instance_to_cell',
            staticmethod(held_map)))

        claim = resource_tracker.ResourceTracker.instance_claim

        def held_claim(rt, context, instance, nodename, *a, **kw):
            if instance.display_name in before_claim:
                play._hold(instance,
                           'nova-compute before instance_claim on %s'
                           % nodename)
            return claim(rt, context, instance, nodename, *a, **kw)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker.instance_claim',
            held_claim))

        set_host = resource_tracker.ResourceTracker._set_instance_host_and_node

        def held_set_host(rt, instance, nodename):
            set_host(rt, instance, nodename)
            if instance.display_name in in_claim:
                play._hold(instance,
                           'resource tracker claim on %s, host set' % nodename)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.resource_tracker.ResourceTracker'
            '._set_instance_host_and_node', held_set_host))

        build = compute_manager.ComputeManager._build_and_run_instance

        def failing_build(mgr, context, instance, *a, **kw):
            if (instance.display_name in reschedule and
                    instance.uuid not in play.failed_once):
                play.failed_once.add(instance.uuid)
                play.notes.setdefault('rescheduled_from', {})[
                    instance.display_name] = mgr.host
                raise exception.RescheduledException(
                    instance_uuid=instance.uuid,
                    reason='first host refused by the play')
            return build(mgr, context, instance, *a, **kw)
        self.useFixture(fixtures.MonkeyPatch(
            'nova.compute.manager.ComputeManager._build_and_run_instance',
            failing_build))

    def _post(self, name, flavor, host=None, az=None):
        body = self._build_server(name=name, flavor_id=flavor,
                                  networks='none', host=host, az=az)
        return self.api.post_server({'server': body})

    def _wait_mapped(self, server):
        """The conductor has mapped the server and deleted its build request
        (it casts to nova-compute right after)."""
        ctxt = nova_context.get_admin_context()
        with eventlet.Timeout(REACH_TIMEOUT):
            while True:
                im = objects.InstanceMapping.get_by_instance_uuid(
                    ctxt, server['id'])
                if im.cell_mapping is not None:
                    try:
                        objects.BuildRequest.get_by_instance_uuid(
                            ctxt, server['id'])
                    except exception.BuildRequestNotFound:
                        return
                eventlet.sleep(0.1)

    # ------------------------------------------------------------ scenario

    def test_held(self):
        # One build at a time per host: a second build on host1 waits in
        # nova-compute's semaphore, as on a busy host.
        self.flags(max_concurrent_builds=1)
        self._computes({'cell1': ['host1', 'host2', 'host3'],
                        'cell2': ['host4']})
        self._flavors()
        rz = self._create_aggregate('agg-rz', availability_zone='rz')
        for host in ('host2', 'host3'):
            self.api.post_aggregate_action(rz, {'add_host': {'host': host}})
        active = self._boot(self.small, host='host1', name='active')
        shelved = self._boot(self.small, host='host2', name='unshelving')
        self._shelve_server(shelved, expected_state='SHELVED_OFFLOADED')

        self._install_holds(conductor_names={'held-conductor'},
                            before_claim={'held-claim', 'rescheduled',
                                          'unshelving'},
                            in_claim={'claiming'},
                            reschedule={'rescheduled'})
        servers = {}
        servers['held-claim'] = self._post('held-claim', self.small, 'host1')
        self._wait_reached('held-claim')
        servers['queued'] = self._post('queued', self.small, 'host1')
        self._wait_mapped(servers['queued'])
        servers['rescheduled'] = self._post('rescheduled', self.small, az='rz')
        self._wait_reached('rescheduled')
        servers['claiming'] = self._post('claiming', self.small, 'host4')
        self._wait_reached('claiming')
        # The harness casts the conductor's unshelve as a call: the API
        # request returns only once the held claim is let go.
        unshelve = eventlet.spawn(self.api.post_server_action, shelved['id'],
                                  {'unshelve': None})
        servers['unshelving'] = shelved
        self._wait_reached('unshelving')
        # The same for a boot: the API's request waits for the conductor.
        conducted = eventlet.spawn(self._post, 'held-conductor', self.small,
                                   'host3')
        self._wait_reached('held-conductor')
        # The queued build has reached nova-compute's semaphore by now: the
        # cast follows the mapping, and every other hold was reached since.
        self.notes['servers'] = {n: s['id'] for n, s in servers.items()}
        self.notes['servers']['active'] = active['id']
        self.notes['servers']['held-conductor'] = \
            self.notes['held']['held-conductor']['uuid']
        self._dump()

        # Let go: every held server is built (or unshelved) for real.
        self._let_go()
        unshelve.wait()
        servers['held-conductor'] = conducted.wait()
        for server in servers.values():
            self._wait_for_state_change(server, 'ACTIVE', max_retries=60)
