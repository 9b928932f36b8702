#!/usr/bin/python3
"""Run nova's own unit tests for the scheduler filters and weighers and record what they ask.

Before the tests run, extra_specs_ops.match, every filter's host_passes, every
weigher's _weigh_object and the weight handler's get_weighed_objects are
wrapped: each call is written as one JSON line to $RECORD, inputs first
(the HostState fields filters and weighers read, the RequestSpec parts, the
nova.conf values in effect), then the output or the exception. The tests run
unchanged (the wrappers return what the real code returns and re-raise what
it raises); their summary goes to stderr.

    RECORD=/tmp/cases.jsonl /usr/bin/python3 record_scheduler.py

It runs on the nova it imports: Zed's on the host, nova 31's (2025.1) inside the chroot of
test/releases/epoxy-chroot.sh. Modules a release does not have (Zed has no hypervisor_version
weigher, nova 31 no availability_zone_filter) and their tests are left out.
"""
import importlib.util
import json
import math
import os
import sys
from unittest import mock
import warnings

warnings.filterwarnings('ignore')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import nova.conf  # noqa: E402
from nova import objects  # noqa: E402
from nova.scheduler import filters as nova_filters  # noqa: E402
from nova.scheduler import weights as nova_weights  # noqa: E402
from nova.scheduler.filters import extra_specs_ops  # noqa: E402
from nova.scheduler.filters import utils as filter_utils  # noqa: E402
from nova.virt import hardware  # noqa: E402
from nova import weights as base_weights  # noqa: E402

import record_hardware as rh  # noqa: E402

objects.register_all()
CONF = nova.conf.CONF

def _exists(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


# the filters and weighers the engine implements (src/lib/engine/{filters,weighers}.ts)
FILTER_MODULES = [
    'compute_filter', 'compute_capabilities_filter', 'image_props_filter',
    'affinity_filter', 'numa_topology_filter', 'availability_zone_filter',
    'aggregate_instance_extra_specs', 'aggregate_multitenancy_isolation',
    'isolated_hosts_filter', 'io_ops_filter', 'num_instances_filter',
    'pci_passthrough_filter',
]
WEIGHER_MODULES = ['ram', 'cpu', 'disk', 'io_ops', 'pci', 'affinity',
                   'compute', 'cross_cell', 'hypervisor_version', 'num_instances',
                   'image_props']
TESTS = (['nova.tests.unit.scheduler.filters.test_extra_specs_ops']
         + ['nova.tests.unit.scheduler.filters.test_%s' % m for m in [
             'compute_filters', 'compute_capabilities_filters',
             'image_props_filters', 'affinity_filters', 'numa_topology_filters',
             'availability_zone_filters', 'aggregate_instance_extra_specs_filters',
             'aggregate_multitenancy_isolation_filters', 'isolated_hosts_filter',
             'io_ops_filters', 'num_instances_filters', 'pci_passthrough_filters']]
         + ['nova.tests.unit.scheduler.weights.test_%s' % m for m in [
             'weights_ram', 'weights_cpu', 'weights_disk', 'weights_ioopsweight',
             'weights_pci', 'weights_affinity', 'weights_compute', 'cross_cell',
             'weights_hosts', 'weights_hypervisor_version', 'weights_num_instances',
             'weights_image_props']])
FILTER_MODULES = [m for m in FILTER_MODULES if _exists('nova.scheduler.filters.' + m)]
WEIGHER_MODULES = [m for m in WEIGHER_MODULES if _exists('nova.scheduler.weights.' + m)]
TESTS = [t for t in TESTS if _exists(t)]


class Unrecordable(Exception):
    pass


def _plain(v, where):
    """A JSON value for v, or Unrecordable (a mock, an object the engine has no field for)."""
    if isinstance(v, mock.NonCallableMock):
        raise Unrecordable('%s is a mock' % where)
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return {'float': str(v)}
        return v
    if isinstance(v, (list, tuple, set, frozenset)):
        items = [_plain(x, where) for x in v]
        return sorted(items, key=json.dumps) if isinstance(v, (set, frozenset)) else items
    if isinstance(v, dict) or hasattr(v, 'items'):
        return {str(k): _plain(x, '%s.%s' % (where, k)) for k, x in v.items()}
    raise Unrecordable('%s is a %s' % (where, type(v).__name__))


def _attr(obj, name, default=None):
    fields = getattr(type(obj), 'fields', None)
    if isinstance(fields, dict) and name in fields and not obj.obj_attr_is_set(name):
        return default
    try:
        v = getattr(obj, name)
    except (AttributeError, NotImplementedError):
        return default
    return v


def _pci_pools(stats):
    if stats is None:
        return []
    if isinstance(stats, mock.NonCallableMock):
        raise Unrecordable('pci_stats is a mock')
    pools = []
    for p in stats.pools:
        tags = {k: str(v) for k, v in p.items()
                if k not in ('vendor_id', 'product_id', 'numa_node', 'count', 'devices')}
        pools.append({'vendor_id': p.get('vendor_id'), 'product_id': p.get('product_id'),
                      'numa_node': p.get('numa_node'), 'count': p.get('count', 0), 'tags': tags})
    return pools


def _service(svc, api):
    if svc is None:
        return None
    if isinstance(svc, mock.NonCallableMock):
        raise Unrecordable('service is a mock')
    s = dict(svc.items()) if hasattr(svc, 'items') else {}
    up = None
    if not s.get('disabled') and api is not None:
        # the servicegroup driver decides liveness; tests stub it, the engine is given its answer
        is_up = api.service_is_up
        if isinstance(is_up, mock.NonCallableMock):
            if is_up.side_effect is not None or isinstance(is_up.return_value, mock.NonCallableMock):
                raise Unrecordable('service_is_up is a mock without a plain answer')
            up = bool(is_up.return_value)
        else:
            up = bool(is_up(svc))
    return {'disabled': bool(s.get('disabled')), 'disabled_reason': s.get('disabled_reason'),
            'up': up}


HOST_FIELDS = ['host', 'nodename', 'cell_uuid', 'uuid', 'free_ram_mb', 'free_disk_mb',
               'total_usable_ram_mb', 'total_usable_disk_gb', 'disk_mb_used', 'vcpus_total',
               'vcpus_used', 'num_instances', 'num_io_ops', 'failed_builds', 'hypervisor_type',
               'hypervisor_version', 'hypervisor_hostname', 'host_ip', 'cpu_info',
               'supported_instances', 'stats', 'cpu_allocation_ratio', 'ram_allocation_ratio',
               'disk_allocation_ratio']


def _image_props(hs):
    """Each instance's image properties as the ImagePropertiesWeigher reads them (str of each value)."""
    out = []
    for inst in (_attr(hs, 'instances') or {}).values():
        if isinstance(inst, mock.NonCallableMock):
            raise Unrecordable('an instance is a mock')
        meta = inst.image_meta
        out.append({} if not meta else {k: str(v) for k, v in meta.properties.to_dict().items()})
    return out


def _host_state(hs, api=None, image_props=False):
    out = {}
    for f in HOST_FIELDS:
        out[f] = _plain(_attr(hs, f), f)
    topo = _attr(hs, 'numa_topology')
    if isinstance(topo, mock.NonCallableMock):
        raise Unrecordable('numa_topology is a mock')
    out['numa_topology'] = None if topo is None else rh._host(topo)
    out['pci_pools'] = _pci_pools(_attr(hs, 'pci_stats'))
    aggs = []
    stub = filter_utils.aggregate_metadata_get_by_host
    values_stub = filter_utils.aggregate_values_from_key
    if isinstance(stub, mock.NonCallableMock) and isinstance(values_stub, mock.NonCallableMock):
        raise Unrecordable('both aggregate helpers are mocks')
    if isinstance(stub, mock.NonCallableMock):
        # what the stub answers, as aggregates that give that answer (one per key, values joined)
        md = stub.return_value
        if stub.side_effect is not None or not isinstance(md, dict):
            raise Unrecordable('aggregate_metadata_get_by_host is a mock without a plain answer')
        out['aggregates'] = [{'id': i, 'hosts': [], 'metadata': {k: ','.join(sorted(v))}} for i, (k, v) in enumerate(sorted(md.items()))]
    elif isinstance(values_stub, mock.NonCallableMock):
        vals = values_stub.return_value
        if values_stub.side_effect is not None or not isinstance(vals, (set, list, tuple)):
            raise Unrecordable('aggregate_values_from_key is a mock without a plain answer')
        out['aggregate_values'] = sorted(str(v) for v in vals)
    for a in [] if 'aggregates' in out else (_attr(hs, 'aggregates') or []):
        if isinstance(a, mock.NonCallableMock):
            raise Unrecordable('an aggregate is a mock')
        aggs.append({'id': _attr(a, 'id'), 'hosts': _plain(_attr(a, 'hosts') or [], 'aggregate.hosts'),
                     'metadata': {k: str(v) for k, v in (_attr(a, 'metadata') or {}).items()}})
    out.setdefault('aggregates', aggs)
    inst = _attr(hs, 'instances') or {}
    if isinstance(inst, mock.NonCallableMock):
        raise Unrecordable('instances is a mock')
    out['instances'] = sorted(inst.keys())
    if image_props:
        out['instance_image_props'] = _image_props(hs)
    out['service'] = _service(_attr(hs, 'service'), api)
    return out


def _spec(spec):
    if spec is None:
        return None
    if isinstance(spec, mock.NonCallableMock):
        raise Unrecordable('the RequestSpec is a mock')
    if isinstance(spec, dict):
        if spec:
            raise Unrecordable('weighing properties given as a dict')
        return {}
    out = {}
    flavor = _attr(spec, 'flavor') if spec.obj_attr_is_set('flavor') else None
    if flavor is not None:
        out['flavor'] = {f: _attr(flavor, f, 0) for f in ('vcpus', 'memory_mb', 'root_gb', 'ephemeral_gb', 'swap')}
        out['flavor']['extra_specs'] = {k: str(v) for k, v in (_attr(flavor, 'extra_specs') or {}).items()}
    image = _attr(spec, 'image') if spec.obj_attr_is_set('image') else None
    if image is not None:
        out['image'] = {'id': _attr(image, 'id') if 'id' in image else None,
                        'properties': rh._image(image) if image.obj_attr_is_set('properties') else {}}
    for f in ('project_id', 'availability_zone', 'num_instances', 'instance_uuid', 'is_bfv'):
        if spec.obj_attr_is_set(f):
            out[f] = _plain(getattr(spec, f), f)
    if spec.obj_attr_is_set('scheduler_hints') and spec.scheduler_hints:
        out['scheduler_hints'] = _plain(spec.scheduler_hints, 'scheduler_hints')
    if spec.obj_attr_is_set('instance_group') and spec.instance_group is not None:
        g = spec.instance_group
        out['instance_group'] = {
            'uuid': _attr(g, 'uuid'), 'name': _attr(g, 'name'), 'policy': _attr(g, 'policy'),
            'policies': _plain(_attr(g, 'policies') or [], 'policies'),
            'rules': _plain(_attr(g, 'rules') or {}, 'rules'),
            'members': _plain(_attr(g, 'members') or [], 'members'),
            'hosts': _plain(_attr(g, 'hosts') or [], 'hosts')}
    if spec.obj_attr_is_set('requested_destination') and spec.requested_destination is not None:
        d = spec.requested_destination
        cell = _attr(d, 'cell')
        out['requested_destination'] = {'host': _attr(d, 'host'), 'node': _attr(d, 'node'),
                                        'cell': None if cell is None else _attr(cell, 'uuid'),
                                        'allow_cross_cell_move': bool(_attr(d, 'allow_cross_cell_move'))}
    if spec.obj_attr_is_set('network_metadata') and spec.network_metadata is not None:
        nm = spec.network_metadata
        out['network_metadata'] = {'physnets': _plain(_attr(nm, 'physnets') or set(), 'physnets'),
                                   'tunneled': bool(_attr(nm, 'tunneled'))}
    if spec.obj_attr_is_set('numa_topology') and spec.numa_topology is not None:
        out['numa_topology'] = rh._instance(spec.numa_topology)
    if spec.obj_attr_is_set('pci_requests') and spec.pci_requests is not None:
        reqs = []
        for r in spec.pci_requests.requests:
            reqs.append({'count': r.count, 'alias_name': _attr(r, 'alias_name'),
                         'spec': _plain(r.spec, 'pci spec'),
                         'numa_policy': _attr(r, 'numa_policy')})
        out['pci_requests'] = reqs
    return out


def _conf():
    fs = CONF.filter_scheduler
    names = ['max_io_ops_per_host', 'max_instances_per_host', 'isolated_hosts', 'isolated_images',
             'restrict_isolated_hosts_to_isolated_images', 'image_properties_default_architecture',
             'ram_weight_multiplier', 'cpu_weight_multiplier', 'disk_weight_multiplier',
             'io_ops_weight_multiplier', 'pci_weight_multiplier', 'soft_affinity_weight_multiplier',
             'soft_anti_affinity_weight_multiplier', 'build_failure_weight_multiplier',
             'cross_cell_move_weight_multiplier']
    out = {n: _plain(getattr(fs, n), n) for n in names}
    # options of one release only (nova 31's weighers; Zed's AZ prefilter switch)
    for n in ('hypervisor_version_weight_multiplier', 'num_instances_weight_multiplier',
              'image_props_weight_multiplier', 'image_props_weight_setting'):
        if hasattr(fs, n):
            out[n] = _plain(getattr(fs, n), n)
    out['default_availability_zone'] = CONF.default_availability_zone
    if hasattr(CONF.scheduler, 'query_placement_for_availability_zone'):
        out['query_placement_for_availability_zone'] = CONF.scheduler.query_placement_for_availability_zone
    out['packing_host_numa_cells_allocation_strategy'] = CONF.compute.packing_host_numa_cells_allocation_strategy
    return out


# stubs whose answer the recorder turns into aggregates (see _host_state)
EXPRESSED = {'aggregate_metadata_get_by_host', 'aggregate_values_from_key'}


def _mocked(module_objs, instance):
    """Names of helpers the filter or weigher would call that a test replaced with a mock."""
    names = []
    for mod in module_objs:
        for n, v in vars(mod).items():
            if isinstance(v, mock.NonCallableMock) and not (mod is filter_utils and n in EXPRESSED):
                names.append('%s.%s' % (mod.__name__.split('.')[-1], n))
    for n in dir(instance):
        if n.startswith('__') or n == 'servicegroup_api':
            continue
        v = getattr(instance, n, None)
        if isinstance(v, mock.NonCallableMock):
            names.append('%s.%s' % (type(instance).__name__, n))
    return sorted(set(names))


def _write(rec):
    rh._write(rec)


def _record(rec, describe, call, result):
    rec['test'] = rh._current_test()
    try:
        rec['input'] = describe()
    except Exception as e:  # kept, marked: counted as not replayed
        rec['input'] = None
        rec['unrecordable'] = '%s: %s' % (type(e).__name__, e)
    try:
        out = call()
    except Exception as e:
        rec['output'] = rh._error(e)
        _write(rec)
        raise
    try:
        rec['output'] = result(out)
    except Exception as e:
        rec['output'] = None
        rec['unrecordable'] = '%s: %s' % (type(e).__name__, e)
    _write(rec)
    return out


def _wrap_match():
    real = extra_specs_ops.match

    def match(value, req):
        return _record({'fn': 'match'}, lambda: {'value': _plain(value, 'value'), 'req': _plain(req, 'req')},
                       lambda: real(value, req), lambda r: {'result': bool(r)})
    extra_specs_ops.match = match


def _outer(klass, method):
    """The most derived class defining method: the call the filter or weigher answers with."""
    for k in klass.__mro__:
        if method in vars(k):
            return k
    return None


def _wrap_filter(cls, mod):
    real = cls.host_passes

    def host_passes(self, host_state, spec_obj):
        if _outer(type(self), 'host_passes') is not cls:
            return real(self, host_state, spec_obj)
        rec = {'fn': 'filter', 'name': type(self).__name__}
        mocked = _mocked([mod, filter_utils, hardware, extra_specs_ops], self)
        if mocked:
            rec['mocked'] = mocked
        api = getattr(self, 'servicegroup_api', None)
        return _record(rec, lambda: {'host': _host_state(host_state, api), 'spec': _spec(spec_obj), 'conf': _conf()},
                       lambda: real(self, host_state, spec_obj), lambda r: {'passes': bool(r)})
    cls.host_passes = host_passes


def _wrap_weigher(cls, mod):
    real = cls._weigh_object

    def _weigh_object(self, host_state, weight_properties):
        if _outer(type(self), '_weigh_object') is not cls:
            return real(self, host_state, weight_properties)
        rec = {'fn': 'weigh', 'name': type(self).__name__}
        mocked = _mocked([mod, filter_utils], self)
        if mocked:
            rec['mocked'] = mocked
        props = type(self).__name__ == 'ImagePropertiesWeigher'
        return _record(rec, lambda: {'host': _host_state(host_state, image_props=props), 'spec': _spec(weight_properties), 'conf': _conf()},
                       lambda: real(self, host_state, weight_properties), lambda r: {'raw': _plain(r, 'raw')})
    cls._weigh_object = _weigh_object


def _wrap_handler():
    real = base_weights.BaseWeightHandler.get_weighed_objects

    def get_weighed_objects(self, weighers, obj_list, weighing_properties):
        rec = {'fn': 'weighed'}
        mocked = sorted({m for w in weighers for m in _mocked([sys.modules[type(w).__module__], filter_utils], w)})
        if mocked:
            rec['mocked'] = mocked

        props = any(type(w).__name__ == 'ImagePropertiesWeigher' for w in weighers)

        def describe():
            return {'weighers': [type(w).__name__ for w in weighers],
                    'hosts': [_host_state(h, image_props=props) for h in obj_list],
                    'spec': _spec(weighing_properties), 'conf': _conf()}
        return _record(rec, describe, lambda: real(self, weighers, obj_list, weighing_properties),
                       lambda r: {'order': [[w.obj.host, w.obj.nodename, _plain(w.weight, 'weight')] for w in r]})
    base_weights.BaseWeightHandler.get_weighed_objects = get_weighed_objects


def install():
    import importlib
    _wrap_match()
    for m in FILTER_MODULES:
        mod = importlib.import_module('nova.scheduler.filters.' + m)
        for v in list(vars(mod).values()):
            if isinstance(v, type) and issubclass(v, nova_filters.BaseHostFilter) and v.__module__ == mod.__name__ and 'host_passes' in vars(v):
                _wrap_filter(v, mod)
    for m in WEIGHER_MODULES:
        mod = importlib.import_module('nova.scheduler.weights.' + m)
        for v in list(vars(mod).values()):
            if isinstance(v, type) and issubclass(v, nova_weights.BaseHostWeigher) and v.__module__ == mod.__name__ and '_weigh_object' in vars(v):
                _wrap_weigher(v, mod)
    _wrap_handler()


if __name__ == '__main__':
    install()
    rh.OUT = open(os.environ['RECORD'], 'w')
    from testtools import run
    try:
        run.main([sys.argv[0]] + TESTS, sys.stderr)
    except SystemExit as e:
        rh.OUT.close()
        sys.exit(e.code)
