#!/usr/bin/python3
"""Run placement's own allocation-candidates gabbits against the real placement and record them.

$GABBITS_DIR holds placement's placement/tests/functional/gabbits/allocation-candidates*.yaml and
*same-subtree*.yaml (from the placement source; the Debian package ships the fixtures, not the gabbits). For each
file, the fixture it names is built with placement's own fixture class (python3-placement), then
every request of the file is sent in order to placement's WSGI app in-process, so the world each
query sees is the one the gabbit's own test sees. For every GET /allocation_candidates the world
(the placement tables, as a cloudctl snapshot has them), the query, the microversion and
placement's answer are written as one JSON line to $RECORD. A request whose URL or body uses
$RESPONSE / $HISTORY / $LAST_URL is not sent (and recorded as such when it is a query).

    GABBITS_DIR=... RECORD=/tmp/cases.jsonl /usr/bin/python3 record_gabbits.py
"""
import glob
import json
import os
import re
import urllib.parse
import sys
import warnings

warnings.filterwarnings('ignore')

import webob  # noqa: E402
import yaml  # noqa: E402

try:
    import gabbi.fixture  # noqa: F401
except ImportError:
    # The fixtures only subclass gabbi's GabbiFixture for its start/stop hooks; this recorder calls
    # those hooks itself, so without python3-gabbi an empty base class stands in.
    import types
    _gabbi = types.ModuleType('gabbi')
    _gabbi.fixture = types.ModuleType('gabbi.fixture')
    _gabbi.fixture.GabbiFixture = type('GabbiFixture', (object,), {})
    sys.modules['gabbi'] = _gabbi
    sys.modules['gabbi.fixture'] = _gabbi.fixture

from placement.tests.functional.fixtures import gabbits as fx  # noqa: E402

TABLES = ['resource_providers', 'inventories', 'allocations', 'consumers', 'resource_classes',
          'traits', 'resource_provider_traits', 'placement_aggregates',
          'resource_provider_aggregates']
COLUMNS = {
    'resource_providers': ['id', 'uuid', 'name', 'generation', 'root_provider_id', 'parent_provider_id'],
    'inventories': ['id', 'resource_provider_id', 'resource_class_id', 'total', 'reserved', 'min_unit',
                    'max_unit', 'step_size', 'allocation_ratio'],
    'allocations': ['id', 'resource_provider_id', 'consumer_id', 'resource_class_id', 'used'],
    'consumers': ['id', 'uuid', 'project_id', 'user_id', 'generation'],
    'resource_classes': ['id', 'name'],
    'traits': ['id', 'name'],
    'resource_provider_traits': ['resource_provider_id', 'trait_id'],
    'placement_aggregates': ['id', 'uuid'],
    'resource_provider_aggregates': ['resource_provider_id', 'aggregate_id'],
}
ENV = re.compile(r"\$ENVIRON\['([A-Z0-9_]+)'\]")
UNSUPPORTED = ('$RESPONSE', '$HISTORY', '$LAST_URL', '$LOCATION', '$SCHEME', '$NETLOC', '$URL')


def _subst(text):
    return ENV.sub(lambda m: os.environ.get(m.group(1), m.group(0)), text)


def _world():
    from placement import db_api
    engine = db_api.placement_context_manager.writer.get_engine()
    out = {}
    with engine.connect() as conn:
        for t in TABLES:
            rows = conn.exec_driver_sql('SELECT %s FROM %s ORDER BY 1' % (', '.join(COLUMNS[t]), t)).fetchall()
            out[t] = [dict(zip(COLUMNS[t], r)) for r in rows]
    # standard classes live in code (os-resource-classes), custom ones in the table
    import os_resource_classes as orc
    std = [{'id': i, 'name': n} for i, n in enumerate(orc.STANDARDS)]
    out['resource_classes'] = std + [r for r in out['resource_classes'] if r['name'].startswith('CUSTOM_')]
    return out


def _send(app, method, url, headers, body):
    req = webob.Request.blank(url, method=method)
    for k, v in headers.items():
        req.headers[k] = str(v)
    if body is not None:
        req.body = json.dumps(body).encode('utf8') if not isinstance(body, str) else body.encode('utf8')
        req.content_type = 'application/json'
    resp = req.get_response(app)
    try:
        data = json.loads(resp.body) if resp.body else None
    except ValueError:
        data = resp.body.decode('utf8', 'replace')
    return resp.status_int, data


def run_file(path, out):
    doc = yaml.safe_load(open(path))
    names = doc.get('fixtures') or ['APIFixture']
    fixture_cls = getattr(fx, names[0])
    fixture = fixture_cls()
    fixture.start_fixture()
    try:
        app = fx.setup_app()
        defaults = (doc.get('defaults') or {}).get('request_headers') or {}
        for test in doc.get('tests') or []:
            method = next((m for m in ('GET', 'POST', 'PUT', 'DELETE', 'PATCH') if m in test), None)
            if method is None:
                continue
            url = str(test[method])
            params = test.get('query_parameters')
            if params:
                url += ('&' if '?' in url else '?') + urllib.parse.urlencode(params, doseq=True)
            headers = dict(defaults)
            headers.update(test.get('request_headers') or {})
            body = test.get('data')
            raw = json.dumps([url, body, headers])
            query = method == 'GET' and url.startswith('/allocation_candidates')
            if any(u in raw for u in UNSUPPORTED):
                if query:
                    out.write(json.dumps({'file': os.path.basename(path), 'name': test.get('name'), 'skipped': 'the gabbit substitutes a previous response'}) + '\n')
                continue
            url = _subst(url)
            body = json.loads(_subst(json.dumps(body))) if body is not None else None
            headers = {k: _subst(str(v)) for k, v in headers.items()}
            rec = None
            if query:
                rec = {'file': os.path.basename(path), 'name': test.get('name'), 'fixture': names[0],
                       'url': url, 'microversion': headers.get('openstack-api-version', ''),
                       'expected_status': test.get('status', 200), 'world': _world()}
            status, data = _send(app, method, url, headers, body)
            if rec is not None:
                rec['status'] = status
                rec['body'] = data
                out.write(json.dumps(rec, sort_keys=True, default=str) + '\n')
    finally:
        fixture.stop_fixture()


def main():
    # the rbac / policy gabbits test who may ask, not what placement answers
    names = glob.glob(os.path.join(os.environ['GABBITS_DIR'], 'allocation-candidates*.yaml'))
    names += glob.glob(os.path.join(os.environ['GABBITS_DIR'], '*same-subtree*.yaml'))
    files = sorted(f for f in set(names) if not re.search(r'rbac|policy', os.path.basename(f)))
    with open(os.environ['RECORD'], 'w') as out:
        for f in files:
            run_file(f, out)
    print('%d gabbit files' % len(files), file=sys.stderr)


if __name__ == '__main__':
    main()
