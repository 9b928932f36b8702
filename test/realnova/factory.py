"""Turns a scenario that real nova played into MariaDB databases.

  factory.py cloud --scenario NAME --prefix P   -> prints one JSON document
  factory.py drop --prefix P
  factory.py templates
  factory.py dumps [--jobs N] [SCENARIO...]  -> plays the uncached ones
  factory.py reboot --scenario NAME --changes FILE  -> reboot.py's outcome

Schemas come from the real `nova-manage api_db sync`, `cell_v2 map_cell0`,
`cell_v2 create_cell`, `db sync` and `placement-manage db sync`, run once
into template databases (cloudctl_tpl_<key>_*) and cloned per cloud. The
rows come from the harness dump (driver.py), cached under .cache/ by
scenario, nova version and driver hash. Server: $CLOUDCTL_TEST_DSN
(default mysql://root@127.0.0.1:3306). Run with /usr/bin/python3.

REALNOVA_RELEASE=2025.1|2026.1|2026.2 (cloud, dumps, reboot) plays and loads
with that release's nova / placement instead (nova 31, 33, 34): the same
driver.py runs in their functional harness inside the release's chroot
(test/releases/release-chroot.sh trixie|forky|sid; CHROOTS below), with its
own /proc, in a private mount namespace; the schemas are that release's
(test/releases/schemas.py) and discover_hosts is its nova-manage's.
Default: zed, the host's.
"""
import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse

import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, '.cache')
PYTHON = '/usr/bin/python3'
CELLS = ('cell1', 'cell2')
# The chroot of each release whose nova runs in one (test/releases/release-chroot.sh).
CHROOTS = {
    '2025.1': os.environ.get('CLOUDCTL_EPOXY_CHROOT') or '/srv/trixie',
    '2026.1': os.environ.get('CLOUDCTL_FORKY_CHROOT') or '/srv/forky',
    '2026.2': os.environ.get('CLOUDCTL_SID_CHROOT') or '/srv/sid',
}
RELEASES = ('zed',) + tuple(CHROOTS)
CHROOT = CHROOTS['2025.1']
# Play modules: driver.py's scenarios, the boots boot_windows.py holds in
# flight, and every driver_<kind>.py beside them (scenarios on other kinds of
# compute, each with its own test class). A scenario's test class is the one
# of its module that defines test_<scenario>.
def drivers():
    return sorted(['driver', 'boot_windows'] + [
        f[:-3] for f in os.listdir(HERE)
        if f.startswith('driver_') and f.endswith('.py')])


def _test_id(driver, scenario):
    import ast
    with open(os.path.join(HERE, driver + '.py')) as f:
        tree = ast.parse(f.read())
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and any(
                isinstance(n, ast.FunctionDef) and n.name == 'test_' + scenario
                for n in cls.body):
            return '%s.%s.test_%s' % (driver, cls.name, scenario)
    raise FactoryError('no scenario %s in %s.py' % (scenario, driver))


def _release():
    r = os.environ.get('REALNOVA_RELEASE') or 'zed'
    if r not in RELEASES:
        raise FactoryError('REALNOVA_RELEASE must be one of %s, not %s'
                           % (', '.join(RELEASES), r))
    return r


def _chroot():
    """The chroot of REALNOVA_RELEASE's nova (not for zed: the host's)."""
    return CHROOTS[_release()]


class FactoryError(Exception):
    pass


def _server():
    dsn = os.environ.get('CLOUDCTL_TEST_DSN') or 'mysql://root@127.0.0.1:3306'
    u = urllib.parse.urlsplit(dsn)
    return {
        'host': u.hostname or '127.0.0.1',
        'port': u.port or 3306,
        'user': urllib.parse.unquote(u.username or 'root'),
        'password': urllib.parse.unquote(u.password or ''),
    }


def _connect(database=None):
    s = _server()
    return pymysql.connect(host=s['host'], port=s['port'], user=s['user'],
                           password=s['password'], database=database,
                           charset='utf8', autocommit=True)


def nova_url(database):
    s = _server()
    auth = urllib.parse.quote(s['user'], safe='')
    if s['password']:
        auth += ':' + urllib.parse.quote(s['password'], safe='')
    return 'mysql+pymysql://%s@%s:%d/%s?charset=utf8' % (
        auth, s['host'], s['port'], database)


def _version(package):
    admin = ([] if _release() == 'zed'
             else ['--admindir=%s/var/lib/dpkg' % _chroot()])
    out = subprocess.run(['dpkg-query'] + admin + ['-W', '-f=${Version}', package],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise FactoryError('%s is not installed' % package)
    return out.stdout.strip()


def _key(*parts):
    return hashlib.sha256('\0'.join(parts).encode()).hexdigest()[:10]


def template_key():
    return _key(_version('python3-nova'), _version('python3-placement'))


@contextlib.contextmanager
def _server_lock(conn, name):
    with conn.cursor() as cur:
        cur.execute('SELECT GET_LOCK(%s, 900)', (name,))
        if cur.fetchone()[0] != 1:
            raise FactoryError('could not take the lock %s' % name)
    try:
        yield
    finally:
        with conn.cursor() as cur:
            cur.execute('SELECT RELEASE_LOCK(%s)', (name,))


def _write_conf(path, text):
    with open(path, 'w') as f:
        f.write(text)
    os.chmod(path, 0o600)


def _manage(argv, what):
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-5:]
        raise FactoryError('%s failed (exit %d): %s' % (
            what, out.returncode, ' | '.join(tail)))
    return out


def _nova_conf(path, api, cell):
    _write_conf(path, (
        '[DEFAULT]\n'
        'transport_url = rabbit://cloudctl@127.0.0.1:5672/\n'
        'log_dir =\n'
        '[api_database]\nconnection = %s\n'
        '[database]\nconnection = %s\n') % (nova_url(api), nova_url(cell)))


def ensure_templates():
    """Template databases whose schemas real nova and placement created."""
    key = template_key()
    names = {'api': 'cloudctl_tpl_%s_api' % key,
             'placement': 'cloudctl_tpl_%s_placement' % key,
             'cell0': 'cloudctl_tpl_%s_cell0' % key,
             'cell': 'cloudctl_tpl_%s_cell' % key}
    conn = _connect()
    try:
        with _server_lock(conn, 'cloudctl_realnova_templates'):
            if all(_has_alembic(conn, db) for db in names.values()):
                return names
            with conn.cursor() as cur:
                for db in names.values():
                    cur.execute('DROP DATABASE IF EXISTS `%s`' % db)
                    cur.execute(
                        'CREATE DATABASE `%s` DEFAULT CHARACTER SET utf8' % db)
            with tempfile.TemporaryDirectory() as tmp:
                conf = os.path.join(tmp, 'nova.conf')
                _nova_conf(conf, names['api'], names['cell'])
                nm = ['nova-manage', '--config-file', conf]
                _manage(nm + ['api_db', 'sync'], 'nova-manage api_db sync')
                _manage(nm + ['cell_v2', 'map_cell0', '--database_connection',
                              nova_url(names['cell0'])],
                        'nova-manage cell_v2 map_cell0')
                _manage(nm + ['cell_v2', 'create_cell', '--name', 'cell1',
                              '--database_connection', nova_url(names['cell'])],
                        'nova-manage cell_v2 create_cell')
                _manage(nm + ['db', 'sync'], 'nova-manage db sync')
                pconf = os.path.join(tmp, 'placement.conf')
                _write_conf(pconf, '[placement_database]\nconnection = %s\n'
                            % nova_url(names['placement']))
                _manage(['placement-manage', '--config-file', pconf, 'db',
                         'sync'], 'placement-manage db sync')
            for db in names.values():
                if not _has_alembic(conn, db):
                    raise FactoryError('%s has no alembic version after sync'
                                       % db)
            return names
    finally:
        conn.close()


def _has_alembic(conn, db):
    with conn.cursor() as cur:
        cur.execute('SELECT COUNT(*) FROM information_schema.TABLES WHERE '
                    'TABLE_SCHEMA = %s AND TABLE_NAME = %s',
                    (db, 'alembic_version'))
        if cur.fetchone()[0] == 0:
            return False
        cur.execute('SELECT COUNT(*) FROM `%s`.alembic_version' % db)
        return cur.fetchone()[0] > 0


def _clone(conn, template, target):
    """The template's tables without nova's shadow_* archive tables: cloudctl
    never reads them and they are half of a cell's tables (the clone's cost is
    one InnoDB file per table). _load still holds the dump's shadow tables
    against the template's columns."""
    with conn.cursor() as cur:
        cur.execute('CREATE DATABASE `%s` DEFAULT CHARACTER SET utf8' % target)
        cur.execute('SELECT TABLE_NAME FROM information_schema.TABLES WHERE '
                    "TABLE_SCHEMA = %s AND TABLE_TYPE = 'BASE TABLE' AND "
                    "TABLE_NAME NOT LIKE 'shadow\\_%%'",
                    (template,))
        tables = [r[0] for r in cur.fetchall()]
        cur.execute('USE `%s`' % target)
        cur.execute('SET SESSION foreign_key_checks = 0')
        for t in tables:
            cur.execute('SHOW CREATE TABLE `%s`.`%s`' % (template, t))
            cur.execute(cur.fetchone()[1])
        cur.execute('INSERT INTO alembic_version SELECT * FROM '
                    '`%s`.alembic_version' % template)


# ------------------------------------------------------------------ dumps

def driver_hash(scenario, driver='driver'):
    """driver.py (or another play module) without the other scenarios'
    methods: adding or editing one scenario replays only that one."""
    import ast
    with open(os.path.join(HERE, driver + '.py')) as f:
        text = f.read()
    lines = text.splitlines(keepends=True)
    drop = []
    for node in ast.walk(ast.parse(text)):
        if (isinstance(node, ast.FunctionDef) and node.name.startswith('test_')
                and node.name != 'test_' + scenario):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            drop.append((start - 1, node.end_lineno))
    for start, end in sorted(drop, reverse=True):
        del lines[start:end]
    return hashlib.sha256(''.join(lines).encode()).hexdigest()


def _play_in_chroot(test, path, log, repaired=None):
    """driver.py's (or reboot.py's) `test` in the release's own harness
    (nova 31, 33 or 34): copies of both in its chroot (and of the repaired rows, for reboot.py), run there
    with a /proc mounted only for this process tree."""
    root = _chroot()
    with tempfile.TemporaryDirectory(dir=os.path.join(root, 'tmp')) as tmp:
        inside = '/tmp/' + os.path.basename(tmp)
        for name in ['reboot.py'] + [d + '.py' for d in drivers()]:
            with open(os.path.join(HERE, name)) as f:
                _write_conf(os.path.join(tmp, name), f.read())
        env = dict(os.environ, REALNOVA_DUMP=inside + '/dump.json')
        if repaired is not None:
            with open(repaired) as f:
                _write_conf(os.path.join(tmp, 'changes.json'), f.read())
            env['REALNOVA_REPAIRED'] = inside + '/changes.json'
        script = ('mount -t proc proc "$0/proc" && '
                  'exec chroot "$0" sh -c \'cd "$0" && exec /usr/bin/python3 '
                  '-m testtools.run "$1"\' "$1" "$2"')
        with open(log, 'w') as out:
            rc = subprocess.run(
                ['unshare', '--mount', '--propagation', 'private', '--fork',
                 'sh', '-c', script, root, inside, test],
                env=env, stdout=out, stderr=subprocess.STDOUT).returncode
        if rc == 0 and os.path.exists(os.path.join(tmp, 'dump.json')):
            os.replace(os.path.join(tmp, 'dump.json'), path)
        return rc


def ensure_dump(scenario, driver='driver'):
    release = _release()
    parts = [scenario, _version('python3-nova'), _version('python3-placement'),
             driver_hash(scenario, driver)]
    if driver != 'driver':
        # Its class is driver.py's: the helpers it inherits are in its key
        # (driver.py without any scenario), driver.py's own keys unchanged.
        parts.append(driver_hash('', 'driver'))
    key = _key(*parts)
    os.makedirs(CACHE, exist_ok=True)
    # Zed's names are as they were before releases (its cached dumps stay valid)
    name = scenario if driver == 'driver' else '%s-%s' % (driver, scenario)
    if release != 'zed':
        name = '%s-%s' % (name, release)
    path = os.path.join(CACHE, '%s-%s.json' % (name, key))
    with open(os.path.join(CACHE, '.lock-%s' % name), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(path):
            return path
        log = path[:-5] + '.log'
        test = _test_id(driver, scenario)
        # A play is the real services racing on green threads; once in a
        # while one loses a race that nothing of cloudctl's is about (a CI
        # run once failed hostname_change, which passes under load here).
        # It is played once more; both logs are kept and both tails are
        # reported, since the machine (and its .cache) is gone after CI.
        tails = []
        for attempt in (1, 2):
            rc = _play(release, test, path, log)
            if rc == 0 and os.path.exists(path):
                if tails:
                    print('realnova: scenario %s passed on its second play; '
                          'the first failed:\n%s' % (scenario, tails[0]),
                          file=sys.stderr)
                return path
            tails.append(_tail(log))
            # A dump written before a failing tear-down is no cache entry.
            if os.path.exists(path):
                os.remove(path)
            if attempt == 1:
                os.replace(log, log + '.1')
        raise FactoryError(
            'scenario %s failed in the nova harness twice; see %s(.1)\n'
            'first play:\n%s\nsecond play:\n%s'
            % (scenario, log, tails[0], tails[1]))


def _play(release, test, path, log, repaired=None):
    if release != 'zed':
        return _play_in_chroot(test, path, log, repaired)
    env = dict(os.environ, REALNOVA_DUMP=path)
    if repaired is not None:
        env['REALNOVA_REPAIRED'] = os.path.abspath(repaired)
    with open(log, 'w') as out:
        return subprocess.run(
            [PYTHON, '-m', 'testtools.run', test],
            cwd=HERE, env=env, stdout=out, stderr=subprocess.STDOUT
        ).returncode


def _tail(log, lines=40):
    """The end of a play's log: the failing test's traceback and verdict."""
    try:
        with open(log, errors='replace') as f:
            return ''.join(f.readlines()[-lines:])
    except OSError as e:
        return '(no log: %s)' % e


def scenarios(driver='driver'):
    """The scenarios a play module defines (its test_<name> methods)."""
    import ast
    with open(os.path.join(HERE, driver + '.py')) as f:
        tree = ast.parse(f.read())
    return [n.name[5:] for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and n.name.startswith('test_')]


def ensure_dumps(names, jobs, driver='driver'):
    """Plays the scenarios whose dump is not cached, `jobs` at a time: each
    play is one single-threaded python process (green threads), so a run on
    a fresh machine takes about the longest play times the rounds instead of
    the sum. The per-scenario file locks keep concurrent callers apart."""
    from concurrent.futures import ThreadPoolExecutor
    unknown = sorted(set(names) - set(scenarios(driver)))
    if unknown:
        raise FactoryError('no such scenario in %s.py: %s'
                           % (driver, ', '.join(unknown)))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {n: pool.submit(ensure_dump, n, driver) for n in names}
    failed = []
    for n, fut in futures.items():
        try:
            fut.result()
        except FactoryError as e:
            failed.append(str(e))
    if failed:
        raise FactoryError('; '.join(failed))
    return {n: os.path.basename(f.result()) for n, f in futures.items()}


# ------------------------------------------------------------------ load

def _columns(conn, db):
    with conn.cursor() as cur:
        cur.execute('SELECT TABLE_NAME, COLUMN_NAME FROM '
                    'information_schema.COLUMNS WHERE TABLE_SCHEMA = %s',
                    (db,))
        out = {}
        for table, col in cur.fetchall():
            out.setdefault(table, set()).add(col)
        return out


def _value(v):
    if isinstance(v, dict) and '$base64' in v:
        import base64
        return base64.b64decode(v['$base64'])
    return v


def _load(conn, db, tables, label, template):
    """Every dumped row, column by name; any schema difference is fatal.
    Shadow tables are compared with the template (the clone has none) and
    must be empty: no scenario archives deleted rows."""
    have = _columns(conn, db)
    problems = []
    shadow = {t: c for t, c in _columns(conn, template).items()
              if t.startswith('shadow_')}
    have.update(shadow)
    for table in shadow:
        if tables.get(table, {}).get('rows'):
            problems.append('%s: %s has rows (archived by the scenario); '
                            'the clone has no shadow tables' % (label, table))
    for table, data in tables.items():
        if table not in have:
            problems.append('%s: table %s only in the harness' % (label, table))
            continue
        mine = set(data['columns'])
        for c in sorted(mine - have[table]):
            problems.append('%s: %s.%s only in the harness' % (label, table, c))
        for c in sorted(have[table] - mine):
            problems.append('%s: %s.%s only in MariaDB' % (label, table, c))
    for table in sorted(set(have) - set(tables) - {'alembic_version'}):
        problems.append('%s: table %s only in MariaDB' % (label, table))
    if problems:
        raise FactoryError('schema mismatch: ' + '; '.join(problems))
    with conn.cursor() as cur:
        cur.execute('USE `%s`' % db)
        cur.execute('SET SESSION foreign_key_checks = 0')
        cur.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, "
                    "',NO_AUTO_VALUE_ON_ZERO')")
        for table, data in tables.items():
            if not data['rows'] or table in shadow:
                continue
            cols = ', '.join('`%s`' % c for c in data['columns'])
            marks = ', '.join(['%s'] * len(data['columns']))
            cur.executemany(
                'INSERT INTO `%s` (%s) VALUES (%s)' % (table, cols, marks),
                [[_value(v) for v in row] for row in data['rows']])


def _names(prefix):
    return {'api': prefix + '_api', 'placement': prefix + '_placement',
            'cell0': prefix + '_cell0',
            **{c: '%s_%s' % (prefix, c) for c in CELLS}}


def _release_templates():
    if _release() == 'zed':
        return ensure_templates()
    sys.path.insert(0, os.path.join(HERE, '..', 'releases'))
    import schemas  # test/releases/schemas.py: the release's nova-manage, in its chroot
    return schemas.templates(_release())


def cloud(scenario, prefix, driver='driver'):
    tpl = _release_templates()
    dump_path = ensure_dump(scenario, driver)
    with open(dump_path) as f:
        dump = json.load(f)
    names = _names(prefix)
    conn = _connect()
    try:
        _clone(conn, tpl['api'], names['api'])
        _clone(conn, tpl['placement'], names['placement'])
        _clone(conn, tpl['cell0'], names['cell0'])
        for c in CELLS:
            _clone(conn, tpl['cell'], names[c])
        _load(conn, names['api'], dump['api'], 'nova_api', tpl['api'])
        _load(conn, names['placement'], dump['placement'], 'placement',
              tpl['placement'])
        by_name = {}
        for uuid, cell in dump['cells'].items():
            target = names.get(cell['name'])
            if target is None:
                raise FactoryError('no database for cell %s' % cell['name'])
            _load(conn, target, cell['tables'], cell['name'],
                  tpl['cell0' if cell['name'] == 'cell0' else 'cell'])
            by_name[cell['name']] = target
        beat_at = _age_heartbeats(conn, by_name.values(),
                                  dump.get('dumped_at'))
        with conn.cursor() as cur:
            for name, db in by_name.items():
                cur.execute('UPDATE `%s`.cell_mappings SET '
                            'database_connection = %%s WHERE name = %%s'
                            % names['api'], (nova_url(db), name))
    finally:
        conn.close()
    # Operators map new computes with discover_hosts (or the scheduler's
    # periodic); the harness never runs it, so nova's own command does it.
    epoxy = _release() != 'zed'
    # (a newer release's own nova-manage: its conf must be seen from its chroot)
    with tempfile.TemporaryDirectory(
            dir=os.path.join(_chroot(), 'tmp') if epoxy else None) as tmp:
        conf = os.path.join(tmp, 'nova.conf')
        _nova_conf(conf, names['api'], names['cell1'])
        nm = (['chroot', _chroot(), 'nova-manage', '--config-file',
               '/tmp/%s/nova.conf' % os.path.basename(tmp)] if epoxy
              else ['nova-manage', '--config-file', conf])
        _manage(nm + ['cell_v2', 'discover_hosts'],
                'nova-manage cell_v2 discover_hosts')
    return {
        'scenario': scenario,
        'databases': sorted(set(names.values())),
        'api': nova_url(names['api']),
        'placement': nova_url(names['placement']),
        'cells': {c: nova_url(names[c]) for c in ('cell0',) + CELLS},
        'notes': dump.get('notes', {}),
        'beat_at': beat_at,
    }


def _age_heartbeats(conn, dbs, since):
    """Services report as they did at `since` (the dump time, then the last
    beat): every heartbeat moves by (now - since), so a service that was up
    is up now and one that had stopped reporting is still as late
    (service_down_time). Returns that now."""
    if not since:
        raise FactoryError('the dump has no dumped_at: replay the scenario')
    with conn.cursor() as cur:
        cur.execute('SELECT UTC_TIMESTAMP(6)')
        now = cur.fetchone()[0]
        for db in dbs:
            for col in ('created_at', 'updated_at', 'last_seen_up'):
                cur.execute(
                    'UPDATE `%s`.services SET `%s` = `%s` + INTERVAL '
                    'TIMESTAMPDIFF(MICROSECOND, %%s, %%s) '
                    'MICROSECOND WHERE `%s` IS NOT NULL' % (db, col, col, col),
                    (since, now))
    return now.isoformat(sep=' ')


def beat(prefix, since):
    """A test that runs long after the load (a loaded CI machine) keeps its
    clouds' services as up, or as late, as they were at `since`."""
    names = _names(prefix)
    conn = _connect()
    try:
        dbs = [names['cell0']] + [names[c] for c in CELLS]
        return {'beat_at': _age_heartbeats(conn, dbs, since)}
    finally:
        conn.close()


def drop(prefix):
    conn = _connect()
    try:
        with conn.cursor() as cur:
            for db in _names(prefix).values():
                cur.execute('DROP DATABASE IF EXISTS `%s`' % db)
    finally:
        conn.close()


# ------------------------------------------------------------------ reboot

def reboot(scenario, changes_path):
    """reboot.py on the scenario with the repaired rows: the outcome of the
    blocked boot once real nova reads what cloudctl wrote. Cached like the
    dumps, by the scenario's play, reboot.py and the rows (without the
    repair's timestamps), which a repair of the same dump writes the same."""
    with open(changes_path) as f:
        changes = json.load(f)
    with open(os.path.join(HERE, 'reboot.py')) as f:
        mine = f.read()
    key = _key('reboot', scenario, _version('python3-nova'),
               _version('python3-placement'), driver_hash(scenario), mine,
               json.dumps(changes, sort_keys=True))
    os.makedirs(CACHE, exist_ok=True)
    release = _release()
    name = scenario if release == 'zed' else '%s-%s' % (scenario, release)
    path = os.path.join(CACHE, 'reboot-%s-%s.json' % (name, key))
    with open(os.path.join(CACHE, '.lock-reboot-%s' % name), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(path):
            log = path[:-5] + '.log'
            rc = _play(release, 'reboot.RepairedClouds.test_%s' % scenario,
                       path, log, repaired=changes_path)
            if rc != 0 or not os.path.exists(path):
                raise FactoryError('reboot of %s failed in the nova harness; '
                                   'see %s\n%s' % (scenario, log, _tail(log)))
        with open(path) as f:
            return json.load(f)


def main(argv):
    p = argparse.ArgumentParser(prog='factory.py')
    sub = p.add_subparsers(dest='cmd', required=True)
    c = sub.add_parser('cloud')
    c.add_argument('--scenario', required=True)
    c.add_argument('--prefix', required=True)
    c.add_argument('--driver', choices=drivers(), default='driver')
    d = sub.add_parser('drop')
    d.add_argument('--prefix', required=True)
    sub.add_parser('templates')
    r = sub.add_parser('reboot')
    r.add_argument('--scenario', required=True)
    r.add_argument('--changes', required=True)
    b = sub.add_parser('beat')
    b.add_argument('--prefix', required=True)
    b.add_argument('--since', required=True)
    ds = sub.add_parser('dumps')
    ds.add_argument('--jobs', type=int, default=2)
    ds.add_argument('--driver', choices=drivers(), default='driver')
    ds.add_argument('scenario', nargs='*')
    args = p.parse_args(argv)
    try:
        if args.cmd == 'cloud':
            out = cloud(args.scenario, args.prefix, args.driver)
        elif args.cmd == 'dumps':
            out = ensure_dumps(args.scenario or scenarios(args.driver),
                               args.jobs, args.driver)
        elif args.cmd == 'reboot':
            out = reboot(args.scenario, args.changes)
        elif args.cmd == 'beat':
            out = beat(args.prefix, args.since)
        elif args.cmd == 'drop':
            drop(args.prefix)
            out = {}
        else:
            out = ensure_templates()
        print(json.dumps(out))
        return 0
    except FactoryError as e:
        print('realnova: %s' % e, file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
