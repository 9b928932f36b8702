#!/usr/bin/python3
"""Run nova's (Zed) own scheduler code on cases cloudctl's engine also runs.

Reads one JSON document on stdin, writes one on stdout. Modes:

- "numa": numa_get_constraints + numa_fit_instance_to_host per case.
- "constraints": numa_get_constraints per flavor / image, with nova's exception
  name and message where nova-api refuses the request.
- "filters": host filters and the weight handler on HostState objects built
  from the JSON host states the engine used.
- "placement": GET /allocation_candidates from placement's own WSGI app,
  in-process, against a MariaDB database the caller names (tables created by
  placement's migrations, rows copied from the snapshot by SQL).

Only used by test/compare-nova; needs the python3-nova and
python3-placement packages.
"""
import datetime
import json
import inspect
import sys
import warnings

warnings.filterwarnings('ignore')


def _nova():
    from nova import config as _unused  # noqa: F401  (registers options)
    from nova import objects
    objects.register_all()
    import nova.conf
    return nova.conf.CONF


def _flavor(objects, f):
    return objects.Flavor(
        id=1, flavorid='f', name='f', vcpus=f['vcpus'], memory_mb=f['memory_mb'],
        root_gb=f.get('root_gb', 0), ephemeral_gb=f.get('ephemeral_gb', 0),
        swap=f.get('swap', 0), extra_specs=f.get('extra_specs', {}))


def _host_topology(objects, topo):
    cells = []
    for c in topo['cells']:
        cells.append(objects.NUMACell(
            id=c['id'], cpuset=set(c['cpuset']), pcpuset=set(c['pcpuset']),
            memory=c['memory'], cpu_usage=c['cpu_usage'],
            memory_usage=c['memory_usage'], pinned_cpus=set(c['pinned_cpus']),
            siblings=[set(s) for s in c['siblings']],
            mempages=[objects.NUMAPagesTopology(
                size_kb=p['size_kb'], total=p['total'], used=p['used'],
                reserved=p['reserved']) for p in c['mempages']],
            network_metadata=objects.NetworkMetadata(
                physnets=set(), tunneled=False)))
    return objects.NUMATopology(cells=cells)


def numa(doc):
    conf = _nova()
    from nova import objects
    from nova.virt import hardware
    out = []
    for case in doc['cases']:
        conf.set_override('packing_host_numa_cells_allocation_strategy',
                          bool(case.get('packing')), group='compute')
        flavor = _flavor(objects, case['flavor'])
        image = objects.ImageMeta.from_dict(
            {'properties': case.get('image_properties', {})})
        try:
            inst = hardware.numa_get_constraints(flavor, image)
        except Exception as e:  # nova refuses the request at the API
            out.append({'error': type(e).__name__})
            continue
        if inst is None:
            out.append({'constraints': None})
            continue
        cons = [{'cpuset': sorted(c.cpuset), 'pcpuset': sorted(c.pcpuset),
                 'memory': c.memory} for c in inst.cells]
        limits = None
        if case.get('limits'):
            limits = objects.NUMATopologyLimits(
                cpu_allocation_ratio=case['limits']['cpu'],
                ram_allocation_ratio=case['limits']['ram'])
        host = _host_topology(objects, case['host'])
        try:
            # nova 31 added provider_mapping (PCI in placement) as a required third argument
            extra = ({'provider_mapping': None} if 'provider_mapping' in
                     inspect.signature(hardware.numa_fit_instance_to_host).parameters else {})
            got = hardware.numa_fit_instance_to_host(host, inst, limits=limits, **extra)
        except ValueError as e:
            out.append({'constraints': cons, 'raised': str(e)})
            continue
        fit = None
        if got is not None:
            fit = []
            for c in got.cells:
                pinning = c.cpu_pinning_raw if c.obj_attr_is_set('cpu_pinning_raw') and c.cpu_pinning_raw else {}
                reserved = c.cpuset_reserved if c.obj_attr_is_set('cpuset_reserved') and c.cpuset_reserved else set()
                fit.append({'id': c.id, 'pinning': {str(k): v for k, v in pinning.items()},
                            'reserved': sorted(reserved)})
        out.append({'constraints': cons, 'fit': fit})
    return out


def constraints(doc):
    """numa_get_constraints alone: the guest topology, or nova's exception and message."""
    _nova()
    from nova import objects
    from nova.virt import hardware
    out = []
    for case in doc['cases']:
        flavor = _flavor(objects, case['flavor'])
        try:
            image = objects.ImageMeta.from_dict({'properties': case.get('image_properties', {})})
            t = hardware.numa_get_constraints(flavor, image)
        except Exception as e:
            msg = e.format_message() if hasattr(e, 'format_message') else str(e)
            out.append({'error': type(e).__name__, 'message': msg})
            continue
        out.append({'cells': None if t is None else [
            {'cpuset': sorted(c.cpuset), 'pcpuset': sorted(c.pcpuset), 'memory': c.memory,
             'pagesize': c.pagesize, 'policy': c.cpu_policy, 'thread': c.cpu_thread_policy}
            for c in t.cells],
            'emulatorThreadsPolicy': None if t is None else t.emulator_threads_policy})
    return out


def _ts(text):
    if not text:
        return None
    return datetime.datetime.strptime(text[:19].replace('T', ' '), '%Y-%m-%d %H:%M:%S')


def filters(doc):
    """HostState.update() from the snapshot's compute node / service / aggregate rows, then each
    filter on every host (not chained) and the weight handler over all hosts."""
    conf = _nova()
    from nova import context as nova_context, objects
    from nova.objects import compute_node as compute_node_obj
    from nova.scheduler import host_manager, filters as nova_filters, weights
    from nova.virt import hardware
    from oslo_utils import timeutils

    # ratio 0.0/NULL makes ComputeNode._from_db_object write the default back: no database here
    compute_node_obj.db.compute_node_update = lambda *a, **k: None
    for group, values in doc.get('conf', {}).items():
        for k, v in values.items():
            conf.set_override(k, v, group=None if group == 'DEFAULT' else group)
    timeutils.set_time_override(_ts(doc['now']))
    ctx = nova_context.get_admin_context()

    hosts = []
    for h in doc['hosts']:
        row = dict(h['compute_node'])
        for k in ('created_at', 'updated_at', 'deleted_at'):
            row[k] = _ts(row.get(k))
        for k in objects.ComputeNode.fields:
            row.setdefault(k, None)
        cn = compute_node_obj.ComputeNode._from_db_object(ctx, objects.ComputeNode(), row)
        hs = host_manager.HostState(cn.host, cn.hypervisor_hostname, h['cell_uuid'])
        svc = dict(h['service'])
        for k in ('created_at', 'updated_at', 'deleted_at', 'last_seen_up'):
            svc[k] = _ts(svc.get(k))
        aggs = [objects.Aggregate(id=a['id'], uuid=a['uuid'], name=a['name'], metadata=a['metadata'],
                                  hosts=a['hosts']) for a in h['aggregates']]
        hs.update(cn, svc, aggs, {u: objects.Instance(uuid=u) for u in h['instances']})
        if hasattr(hs, 'allocation_candidates'):
            # nova 31's scheduler hands each host its placement candidates before the filters, and
            # NUMATopologyFilter / PciPassthroughFilter keep the ones that fit: one candidate without
            # request-group mappings (no PCI in placement), as a host placement offered
            hs.allocation_candidates = [{'mappings': {}}]
        hosts.append(hs)

    s = doc['spec']
    flavor = _flavor(objects, s['flavor'])
    image = objects.ImageMeta.from_dict({'id': s.get('image_id') or '00000000-0000-0000-0000-000000000000',
                                         'properties': s.get('image_properties', {})})
    spec = objects.RequestSpec(
        flavor=flavor, image=image, project_id=s['project_id'], user_id='u',
        availability_zone=s.get('availability_zone'), num_instances=1,
        scheduler_hints={k: v for k, v in s.get('hints', {}).items()},
        instance_group=None, pci_requests=objects.InstancePCIRequests(requests=[]),
        ignore_hosts=None, force_hosts=None, force_nodes=None, limits=objects.SchedulerLimits(),
        instance_uuid='00000000-0000-4000-8000-000000000001')
    if not s.get('image_id'):
        del spec.image.id
    if s.get('pci_requests'):
        spec.pci_requests = objects.InstancePCIRequests(requests=[
            objects.InstancePCIRequest(count=r['count'], spec=r['spec'], alias_name=r['alias'])
            for r in s['pci_requests']])
    g = s.get('group')
    if g:
        spec.instance_group = objects.InstanceGroup(
            uuid=g['uuid'], policy=g['policy'], policies=[g['policy']], members=g['members'], hosts=g['hosts'],
            rules=g['rules'])
    spec.numa_topology = hardware.numa_get_constraints(flavor, image)

    handler = nova_filters.HostFilterHandler()
    classes = {c.__name__: c for c in handler.get_all_classes()}
    result = {'filters': {}}
    for name in doc['filters']:
        f = classes[name]()
        result['filters'][name] = [h.nodename for h in hosts if f.host_passes(h, spec)]
    whandler = weights.HostWeightHandler()
    wclasses = {c.__name__: c for c in whandler.get_all_classes()}
    weighers = [wclasses[n]() for n in doc['weighers']]
    # A node whose usage was never reported keeps cpu_allocation_ratio None and CPUWeigher would
    # raise TypeError in nova; the caller leaves such nodes out of the weighing.
    weighed = whandler.get_weighed_objects(weighers, [h for h in hosts if h.nodename not in doc.get('unweighed', [])], spec)
    result['weighed'] = [[w.obj.nodename, w.weight] for w in weighed]
    return result


def request(doc):
    """ResourceRequest.from_request_spec + resources_from_request_spec -> to_querystring()."""
    conf = _nova()
    from nova import context as nova_context, objects
    from nova.scheduler import utils as scheduler_utils
    for group, values in doc.get('conf', {}).items():
        for k, v in values.items():
            conf.set_override(k, v, group=None if group == 'DEFAULT' else group)
    ctx = nova_context.get_admin_context()
    out = []
    for case in doc['cases']:
        flavor = _flavor(objects, case['flavor'])
        image = objects.ImageMeta.from_dict({'properties': case.get('image_properties', {})})
        spec = objects.RequestSpec(
            flavor=flavor, image=image, is_bfv=bool(case.get('is_bfv')), num_instances=1,
            scheduler_hints=case.get('hints', {}),
            requested_resources=[], request_level_params=objects.RequestLevelParams(
                root_required=set(case.get('root_required', [])), root_forbidden=set(case.get('root_forbidden', []))),
            requested_destination=objects.Destination(
                aggregates=[','.join(x) for x in case.get('aggregates', [])],
                forbidden_aggregates=set(case.get('forbidden_aggregates', []))))
        try:
            rr = scheduler_utils.resources_from_request_spec(ctx, spec, None)
            out.append({'query': rr.to_querystring()})
        except Exception as e:  # nova refuses the flavor/image combination
            out.append({'error': type(e).__name__})
    return out


def resources(doc):
    """ResourceRequest.from_request_spec for flavors alone: the merged amounts and the query (every group)."""
    _nova()
    from nova import objects
    from nova.scheduler import utils as scheduler_utils
    out = []
    for case in doc['cases']:
        spec = objects.RequestSpec(flavor=_flavor(objects, case['flavor']), is_bfv=bool(case.get('is_bfv')))
        rr = scheduler_utils.ResourceRequest.from_request_spec(spec)
        out.append({'merged': rr.merged_resources(), 'query': rr.to_querystring()})
    return out


def placement(doc):
    import urllib.parse
    import pymysql
    from oslo_config import cfg
    from placement import conf as pconf, deploy
    import webob

    my = doc['mysql']
    name = doc['database']
    admin = pymysql.connect(host=my['host'], port=my['port'], user=my['user'], password=my['password'], autocommit=True)
    admin.cursor().execute('CREATE DATABASE `%s` CHARACTER SET utf8mb4' % name)
    try:
        url = 'mysql+pymysql://%s:%s@%s:%d/%s?charset=utf8mb4' % (
            urllib.parse.quote(my['user']), urllib.parse.quote(my['password']), my['host'], my['port'], name)
        conf = cfg.ConfigOpts()
        pconf.register_opts(conf)
        conf.set_default('connection', url, group='placement_database')
        conf([], project='placement', default_config_files=[])
        conf.set_override('sync_on_startup', True, group='placement_database')
        conf.set_override('auth_strategy', 'noauth2', group='api')
        app = deploy.loadapp(conf)  # placement's own migrations make the schema
        _load_placement_rows(pymysql.connect(host=my['host'], port=my['port'], user=my['user'],
                                             password=my['password'], database=name), doc['placement'])
        out = []
        versions = doc.get('microversions') or [None] * len(doc['queries'])
        for q, mv in zip(doc['queries'], versions):
            req = webob.Request.blank('/allocation_candidates?' + q, method='GET')
            req.headers['x-auth-token'] = 'admin'
            req.headers['OpenStack-API-Version'] = 'placement ' + (mv or doc.get('microversion', '1.36'))
            r = req.get_response(app)
            body = json.loads(r.body) if r.body else None
            if r.status_int != 200:
                out.append({'status': r.status_int, 'error': body})
                continue
            out.append({'status': 200,
                        'allocation_requests': [a['allocations'] for a in body['allocation_requests']],
                        'provider_summaries': sorted(body['provider_summaries'].keys())})
        return out
    finally:
        admin.cursor().execute('DROP DATABASE IF EXISTS `%s`' % name)
        admin.close()


def _load_placement_rows(db, pl):
    """The snapshot's placement rows, ids kept; traits mapped by name onto placement's own ids."""
    cur = db.cursor()
    cur.execute('SELECT id, name FROM traits')
    trait_ids = {n: i for i, n in cur.fetchall()}
    for t in pl['traits']:
        if t['name'] not in trait_ids:
            cur.execute('INSERT INTO traits (name, created_at) VALUES (%s, NOW())', (t['name'],))
            trait_ids[t['name']] = cur.lastrowid
    snap_trait = {t['id']: t['name'] for t in pl['traits']}
    for rc in pl['resource_classes']:
        cur.execute('INSERT IGNORE INTO resource_classes (id, name, created_at) VALUES (%s, %s, NOW())', (rc['id'], rc['name']))
    # parents before children: root_provider_id / parent_provider_id are foreign keys
    for rp in sorted(pl['resource_providers'], key=lambda r: (r['parent_provider_id'] is not None, r['id'])):
        cur.execute('INSERT INTO resource_providers (id, uuid, name, generation, root_provider_id, parent_provider_id, created_at) '
                    'VALUES (%s, %s, %s, %s, %s, %s, NOW())',
                    (rp['id'], rp['uuid'], rp['name'], rp['generation'], rp['root_provider_id'], rp['parent_provider_id']))
    for i in pl['inventories']:
        cur.execute('INSERT INTO inventories (id, resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at) '
                    'VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, NOW())',
                    (i['id'], i['resource_provider_id'], i['resource_class_id'], i['total'], i['reserved'], i['min_unit'], i['max_unit'], i['step_size'], i['allocation_ratio']))
    cur.execute("INSERT INTO projects (id, external_id, created_at) VALUES (1, 'p', NOW())")
    cur.execute("INSERT INTO users (id, external_id, created_at) VALUES (1, 'u', NOW())")
    for c in sorted({a['consumer_id'] for a in pl['allocations']}):
        cur.execute('INSERT INTO consumers (uuid, project_id, user_id, generation, created_at) VALUES (%s, 1, 1, 0, NOW())', (c,))
    for a in pl['allocations']:
        cur.execute('INSERT INTO allocations (id, resource_provider_id, consumer_id, resource_class_id, used, created_at) VALUES (%s, %s, %s, %s, %s, NOW())',
                    (a['id'], a['resource_provider_id'], a['consumer_id'], a['resource_class_id'], a['used']))
    for t in pl['resource_provider_traits']:
        cur.execute('INSERT INTO resource_provider_traits (resource_provider_id, trait_id, created_at) VALUES (%s, %s, NOW())',
                    (t['resource_provider_id'], trait_ids[snap_trait[t['trait_id']]]))
    for a in pl['placement_aggregates']:
        cur.execute('INSERT INTO placement_aggregates (id, uuid, created_at) VALUES (%s, %s, NOW())', (a['id'], a['uuid']))
    for a in pl['resource_provider_aggregates']:
        cur.execute('INSERT INTO resource_provider_aggregates (resource_provider_id, aggregate_id, created_at) VALUES (%s, %s, NOW())',
                    (a['resource_provider_id'], a['aggregate_id']))
    db.commit()
    db.close()


def main():
    doc = json.load(sys.stdin)
    mode = doc['mode']
    result = {'numa': numa, 'constraints': constraints, 'filters': filters, 'request': request,
              'resources': resources, 'placement': placement}[mode](doc)
    json.dump(result, sys.stdout)


if __name__ == '__main__':
    main()
