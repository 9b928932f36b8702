#!/usr/bin/python3
"""Real nova's scheduler choosing hosts for a boot request, in this process: the bench's figure
beside `cloudctl simulate boot` (scripts/bench-2k.ts).

    /usr/bin/python3 scripts/select-destinations.py NOVA_CONF FLAVOR [NUM_INSTANCES]

NUM_INSTANCES (default 1) instances in one request, as `openstack server create --min N`: one
select_destinations call for all of them, each claimed in turn.

NOVA_CONF names the API and cell databases and a running placement-api. Nothing goes over RPC: the
transport is oslo.messaging's in-memory fake and notifications are off, so what is timed is what a
scheduler worker does for one request (placement's allocation candidates, the cells' compute nodes
and instances, filters, weighers, the claim in placement). The claim writes one allocation for a new
consumer: run it after anything that must see the cloud as seeded.

Prints one JSON object: the chosen host and node, seconds for select_destinations alone (a scheduler
already up) and with the scheduler's start-up (SchedulerManager() and the load of every cell's
instances its host manager starts), the CPU seconds of each, and what the scheduler saw on the way.
"""
import json
import sys
import time
import warnings


def main():
    conf_file, flavor_name = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    warnings.simplefilter('ignore')
    # The eventlet-patched import order nova's services use; without it oslo.db warns and nova's
    # utils spawn threads differently.
    import nova.monkey_patch  # noqa: F401
    from nova import config, context as nova_context, objects, rpc
    from oslo_config import cfg
    from oslo_utils import uuidutils

    config.parse_args(['select-destinations', '--config-file', conf_file], default_config_files=[])
    objects.register_all()
    conf = cfg.CONF
    rpc.init(conf)
    ctxt = nova_context.get_admin_context()
    # The project and user a boot request carries; placement records them on the claim.
    ctxt.project_id = uuidutils.generate_uuid(dashed=False)
    ctxt.user_id = uuidutils.generate_uuid(dashed=False)

    from nova.scheduler import manager

    flavor = objects.Flavor.get_by_name(ctxt, flavor_name)
    instance_uuids = [uuidutils.generate_uuid() for _ in range(count)]
    spec = objects.RequestSpec(
        context=ctxt,
        instance_uuid=instance_uuids[0],
        project_id=ctxt.project_id,
        user_id=ctxt.user_id,
        flavor=flavor,
        image=objects.ImageMeta.from_dict({'properties': {}}),
        num_instances=count,
        ignore_hosts=None,
        force_hosts=None,
        force_nodes=None,
        retry=None,
        availability_zone=None,
        scheduler_hints={},
        instance_group=None,
        limits=None,
        pci_requests=objects.InstancePCIRequests(requests=[]),
        numa_topology=None,
        security_groups=objects.SecurityGroupList(),
        is_bfv=False,
    )

    wall0, cpu0 = time.perf_counter(), time.process_time()
    scheduler = started_scheduler(manager)
    seen = watch(scheduler)
    wall1, cpu1 = time.perf_counter(), time.process_time()
    selections = scheduler.select_destinations(
        ctxt, request_spec=None, filter_properties=None, spec_obj=spec,
        instance_uuids=instance_uuids, return_objects=True,
        return_alternates=False)
    wall2, cpu2 = time.perf_counter(), time.process_time()
    chosen = selections[0][0]
    print(json.dumps({
        'host': chosen.service_host,
        'node': chosen.nodename,
        'select_destinations_s': wall2 - wall1,
        'select_destinations_cpu_s': cpu2 - cpu1,
        'with_startup_s': wall2 - wall0,
        'with_startup_cpu_s': cpu2 - cpu0,
        'consumer': instance_uuids[0],
        'hosts': [s[0].service_host for s in selections],
        **seen,
    }))


def started_scheduler(manager):
    """SchedulerManager() and the start-up work it leaves running: its host manager loads every
    cell's instances in a green thread. A running scheduler finished that long before any request;
    left running, it would interleave with the timed call and be counted in it."""
    import eventlet
    from nova import utils

    spawned = []
    spawn_n = utils.spawn_n
    utils.spawn_n = lambda func, *args, **kwargs: spawned.append(eventlet.spawn(func, *args, **kwargs))
    try:
        scheduler = manager.SchedulerManager()
    finally:
        utils.spawn_n = spawn_n
    for thread in spawned:
        thread.wait()
    return scheduler


def watch(scheduler):
    """What the scheduler saw on the way, for the bench to set beside cloudctl's trace: placement's
    candidates and their hosts, how many hosts the filters kept, the best weighed. Counted as they pass,
    not recomputed."""
    seen = {}
    placement = scheduler.placement_client
    host_manager = scheduler.host_manager
    candidates = placement.get_allocation_candidates
    filtered = host_manager.get_filtered_hosts
    weighed = host_manager.get_weighed_hosts

    def get_allocation_candidates(*args, **kwargs):
        res = candidates(*args, **kwargs)
        if res is not None and res[0] is not None:
            seen['candidates'] = len(res[0])
            seen['provider_summaries'] = len(res[1] or {})
        return res

    def get_filtered_hosts(host_states, *args, **kwargs):
        host_states = list(host_states)
        hosts = list(filtered(host_states, *args, **kwargs))
        if 'filtered' not in seen:
            seen['host_states'] = sorted(h.host for h in host_states)
            seen['filtered'] = len(hosts)
        return hosts

    def get_weighed_hosts(*args, **kwargs):
        hosts = weighed(*args, **kwargs)
        seen.setdefault('weighed', [
            {'host': w.obj.host, 'node': w.obj.nodename, 'weight': w.weight} for w in hosts[:3]])
        return hosts

    placement.get_allocation_candidates = get_allocation_candidates
    host_manager.get_filtered_hosts = get_filtered_hosts
    host_manager.get_weighed_hosts = get_weighed_hosts
    return seen


if __name__ == '__main__':
    main()
