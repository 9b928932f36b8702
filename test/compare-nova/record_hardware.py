#!/usr/bin/python3
"""Run nova's own unit tests for nova.virt.hardware and record what they ask.

numa_get_constraints, numa_fit_instance_to_host and
numa_usage_from_instance_numa are wrapped before the tests run: every call
the tests make (directly or through other hardware functions) is written,
inputs first, then the output or the exception, as one JSON line to the file
named by $RECORD. The tests themselves run unchanged (the wrappers return
what the real functions return and re-raise what they raise); their summary
goes to stderr.

    RECORD=/tmp/cases.jsonl /usr/bin/python3 record_hardware.py
"""
import inspect
import json
import os
import sys
import unittest
from unittest import mock
import warnings

warnings.filterwarnings('ignore')

from nova import objects  # noqa: E402
from nova.virt import hardware  # noqa: E402

objects.register_all()

OUT = None  # opened by main(): record_scheduler.py imports the helpers below


def _set(obj, name):
    return obj.obj_attr_is_set(name)


def _get(obj, name, default=None):
    try:
        return getattr(obj, name) if _set(obj, name) else default
    except NotImplementedError:
        return default


def _ints(xs):
    return sorted(int(x) for x in (xs or []))


def _current_test():
    f = sys._getframe(2)
    while f is not None:
        s = f.f_locals.get('self')
        if isinstance(s, unittest.TestCase):
            return s.id()
        f = f.f_back
    return None


def _flavor(flavor):
    specs = flavor.get('extra_specs', {}) if hasattr(flavor, 'get') else {}
    return {'vcpus': flavor.vcpus, 'memory_mb': flavor.memory_mb,
            'extra_specs': {k: str(v) for k, v in (specs or {}).items()}}


def _image(image_meta):
    """ImageMetaProps back to the Glance properties they were read from."""
    props = image_meta.properties
    out = {}
    for name in props.fields:
        if not _set(props, name):
            continue
        v = getattr(props, name)
        if name == 'hw_numa_cpus':
            for i, cpus in enumerate(v):
                out['hw_numa_cpus.%d' % i] = ','.join(str(c) for c in sorted(cpus))
        elif name == 'hw_numa_mem':
            for i, mem in enumerate(v):
                out['hw_numa_mem.%d' % i] = str(mem)
        elif name == 'traits_required':
            for t in v:
                out['trait:%s' % t] = 'required'
        elif isinstance(v, bool):
            out[name] = 'true' if v else 'false'
        elif v is not None:
            out[name] = str(v)
    return out


def _host(topo):
    cells = []
    for c in topo.cells:
        nm = _get(c, 'network_metadata')
        cells.append({
            'id': c.id, 'cpuset': _ints(_get(c, 'cpuset')),
            'pcpuset': _ints(_get(c, 'pcpuset')), 'memory': c.memory,
            'cpu_usage': _get(c, 'cpu_usage', 0) or 0,
            'memory_usage': _get(c, 'memory_usage', 0) or 0,
            'pinned_cpus': _ints(_get(c, 'pinned_cpus')),
            'siblings': [_ints(s) for s in (_get(c, 'siblings') or [])],
            'mempages': [{'size_kb': p.size_kb, 'total': p.total,
                          'used': _get(p, 'used', 0), 'reserved': _get(p, 'reserved', 0)}
                         for p in (_get(c, 'mempages') or [])],
            'socket': _get(c, 'socket'),
            'physnets': sorted(nm.physnets) if nm is not None and _set(nm, 'physnets') else [],
            'tunneled': bool(nm is not None and _get(nm, 'tunneled')),
        })
    return {'cells': cells}


def _instance(topo):
    cells = []
    for c in topo.cells:
        pinning = _get(c, 'cpu_pinning_raw') or {}
        cells.append({
            'id': c.id, 'cpuset': _ints(_get(c, 'cpuset')),
            'pcpuset': _ints(_get(c, 'pcpuset')), 'memory': c.memory,
            'pagesize': _get(c, 'pagesize'), 'cpu_policy': _get(c, 'cpu_policy'),
            'cpu_thread_policy': _get(c, 'cpu_thread_policy'),
            'pinning': {str(k): v for k, v in sorted(pinning.items())},
            'reserved': _ints(_get(c, 'cpuset_reserved')),
        })
    return {'cells': cells, 'emulator_threads_policy': _get(topo, 'emulator_threads_policy')}


def _limits(limits):
    if limits is None:
        return None
    nm = _get(limits, 'network_metadata')
    return {'cpu': limits.cpu_allocation_ratio, 'ram': limits.ram_allocation_ratio,
            'physnets': sorted(nm.physnets) if nm is not None and _set(nm, 'physnets') else [],
            'tunneled': bool(nm is not None and _get(nm, 'tunneled'))}


def _error(e):
    msg = e.format_message() if hasattr(e, 'format_message') else str(e)
    return {'error': type(e).__name__, 'message': msg}


def _write(rec):
    global OUT
    if OUT is None:
        OUT = open(os.environ['RECORD'], 'w')
    OUT.write(json.dumps(rec, sort_keys=True) + '\n')
    OUT.flush()


def _wrap(name, describe, result):
    real = getattr(hardware, name)

    def wrapper(*args, **kwargs):
        rec = {'fn': name, 'test': _current_test()}
        # a test that mocks a helper of hardware.py records the mock's answer, not nova's
        mocked = sorted(n for n, v in vars(hardware).items() if isinstance(v, mock.NonCallableMock))
        if mocked:
            rec['mocked'] = mocked
        try:
            rec['input'] = describe(*args, **kwargs)
        except Exception as e:  # an input the recorder cannot express: kept, marked
            rec['input'] = None
            rec['unrecordable'] = '%s: %s' % (type(e).__name__, e)
        try:
            out = real(*args, **kwargs)
        except Exception as e:
            rec['output'] = _error(e)
            _write(rec)
            raise
        try:
            rec['output'] = result(out)
        except Exception as e:
            rec['output'] = None
            rec['unrecordable'] = '%s: %s' % (type(e).__name__, e)
        _write(rec)
        return out

    wrapper.__wrapped__ = real
    setattr(hardware, name, wrapper)


def _conf_packing():
    import nova.conf
    return bool(nova.conf.CONF.compute.packing_host_numa_cells_allocation_strategy)


def install():
    _wrap('numa_get_constraints',
          lambda flavor, image_meta: {'flavor': _flavor(flavor), 'image': _image(image_meta)},
          lambda t: {'topology': None if t is None else _instance(t)})
    # bound to the real signature: nova 31 put provider_mapping (PCI in placement) third
    fit_sig = inspect.signature(hardware.numa_fit_instance_to_host)

    def describe_fit(*args, **kwargs):
        a = fit_sig.bind(*args, **kwargs).arguments
        return {'host': _host(a['host_topology']), 'instance': _instance(a['instance_topology']),
                'limits': _limits(a.get('limits')),
                'pci': bool(a.get('pci_requests')) or bool(a.get('pci_stats')),
                'packing': _conf_packing()}
    _wrap('numa_fit_instance_to_host', describe_fit,
          lambda t: {'topology': None if t is None else _instance(t)})
    _wrap('numa_usage_from_instance_numa',
          lambda host_topology, instance_topology, free=False: {
              'host': None if host_topology is None else _host(host_topology),
              'instance': None if instance_topology is None else _instance(instance_topology),
              'free': bool(free)},
          lambda t: {'host': None if t is None else _host(t)})


if __name__ == '__main__':
    install()
    open(os.environ['RECORD'], 'w').close()
    from testtools import run
    try:
        run.main([sys.argv[0], 'nova.tests.unit.virt.test_hardware'], sys.stderr)
    except SystemExit as e:
        if OUT is not None:
            OUT.close()
        sys.exit(e.code)
