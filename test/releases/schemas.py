"""Real nova / placement schemas of each supported release, on the test MariaDB.

  schemas.py templates --release zed|2025.1|2026.1|2026.2|2023.1|2023.2|2024.1|2024.2
                                                    -> JSON: the template database names
  schemas.py source-unavailable --release 2023.1|...|2024.2
                                                    -> JSON: why that release cannot be built
  schemas.py cloud --release R --prefix P [--cells cell1,cell2]
                                                    -> JSON: the databases of a fresh cloud
  schemas.py drop --prefix P

zed: the host's nova 26 / placement 8 (Debian 12), through test/realnova/factory.py's templates
(shared, so both suites build them once). 2025.1, 2026.1, 2026.2: nova 31 / placement 13 (Debian
13), nova 33 / placement 15 (forky), nova 34 / placement 16 (sid), each run in the chroot that
release-chroot.sh builds for its suite (factory.CHROOTS: /srv/trixie, /srv/forky, /srv/sid); a
chroot shares the host's network, so nova-manage reaches the test server at the same address.
2023.1-2024.2: nova 27-30 / placement 9-12 at their release tags, from source (SOURCE_TAGS below).

A cloud is a structure-only clone of the templates (alembic_version included): the rows are the
test's business. Run with /usr/bin/python3.
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'realnova'))

import factory  # noqa: E402  (test/realnova/factory.py: server, templates, clone)
from factory import FactoryError  # noqa: E402

RELEASES = factory.RELEASES
# release -> (Debian suite, the marker release-chroot.sh leaves; trixie's keeps its old name)
SUITES = {'2025.1': ('trixie', 'epoxy'), '2026.1': ('forky', 'forky'),
          '2026.2': ('sid', 'sid')}


def chroot_ready(release='2025.1'):
    return os.path.exists(os.path.join(factory.CHROOTS[release],
                                       '.cloudctl-%s-ready' % SUITES[release][1]))


def _chroot_version(root, package):
    out = subprocess.run(['chroot', root, 'dpkg-query', '-W', '-f=${Version}',
                          package], capture_output=True, text=True)
    if out.returncode != 0:
        raise FactoryError('%s is not installed in %s' % (package, root))
    return out.stdout.strip()


# 2023.1-2024.2 (no Debian package carries them): nova and placement at their release tags, from
# git directories fetched beside the project ($CLOUDCTL_NOVA_GIT / $CLOUDCTL_PLACEMENT_GIT), run from
# source by the 2025.1 chroot's python and libraries. The code is exported at run time into the
# chroot's /tmp and removed after; nothing of it is kept.
SOURCE_TAGS = {'2023.1': ('27.0.0', '9.0.0'), '2023.2': ('28.0.0', '10.0.0'),
               '2024.1': ('29.0.0', '11.0.0'), '2024.2': ('30.0.0', '12.0.0')}
NOVA_GIT = (os.environ.get('CLOUDCTL_NOVA_GIT')
            or '/work/.mirror/openstack+nova/repo')
PLACEMENT_GIT = (os.environ.get('CLOUDCTL_PLACEMENT_GIT')
                 or '/work/.mirror/openstack+placement/repo')
# Python 3.13 has no crypt module; nova 27-30 import it at module level (file injection), which
# nova-manage's schema commands never call. The harness gives them one that refuses if called.
CRYPT_SHIM = ("def crypt(*a, **k):\n    raise NotImplementedError('no crypt on python 3.13')\n"
              "mksalt = crypt\nmethods = []\nMETHOD_SHA512 = None\n")


def _tag_commit(git_dir, tag):
    out = subprocess.run(['git', '--git-dir', git_dir, 'rev-parse', '--verify', '-q',
                          tag + '^{commit}'], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else None


def source_unavailable(release):
    """Why `release`'s schemas cannot be made from source here; None when they can."""
    if release == '2023.1':
        # nova 27 still imports sqlalchemy-migrate at nova-manage's start (nova/db/migration.py)
        return ('nova 27 imports sqlalchemy-migrate, which Debian 13 (the chroot that runs it) '
                'no longer ships; its heads are read from the tag\'s migration directories only')
    if not chroot_ready('2025.1'):
        return 'no nova 2025.1 chroot (its python runs the code): test/releases/epoxy-chroot.sh'
    nova_tag, placement_tag = SOURCE_TAGS[release]
    for git_dir, tag, env in ((NOVA_GIT, nova_tag, 'CLOUDCTL_NOVA_GIT'),
                              (PLACEMENT_GIT, placement_tag, 'CLOUDCTL_PLACEMENT_GIT')):
        if _tag_commit(git_dir, tag) is None:
            return 'no git directory with tag %s at %s ($%s)' % (tag, git_dir, env)
    return None


@contextlib.contextmanager
def _source_tools(release):
    """nova-manage / placement-manage of `release` from its tags, as command prefixes run in the
    2025.1 chroot."""
    root = factory.CHROOTS['2025.1']
    nova_tag, placement_tag = SOURCE_TAGS[release]
    with tempfile.TemporaryDirectory(dir=os.path.join(root, 'tmp'), prefix='cloudctl-src-') as tmp:
        inside = '/tmp/' + os.path.basename(tmp)
        for git_dir, tag, name in ((NOVA_GIT, nova_tag, 'nova'),
                                   (PLACEMENT_GIT, placement_tag, 'placement')):
            os.makedirs(os.path.join(tmp, name))
            archive = subprocess.run(['git', '--git-dir', git_dir, 'archive', tag, name],
                                     capture_output=True)
            if archive.returncode != 0:
                raise FactoryError('git archive %s %s failed: %s'
                                   % (tag, name, archive.stderr.decode()[-300:]))
            subprocess.run(['tar', '-x', '-C', os.path.join(tmp, name)], input=archive.stdout,
                           check=True)
        os.makedirs(os.path.join(tmp, 'shim'))
        factory._write_conf(os.path.join(tmp, 'shim', 'crypt.py'), CRYPT_SHIM)
        path = ':'.join('%s/%s' % (inside, d) for d in ('nova', 'placement', 'shim'))

        def tool(module):
            return ['chroot', root, 'env', 'PYTHONPATH=' + path, '/usr/bin/python3', '-c',
                    'import sys; from %s import main; sys.argv = sys.argv[1:]; sys.exit(main())'
                    % module, module.split('.')[0] + '-manage']
        yield tool('nova.cmd.manage'), tool('placement.cmd.manage'), root


@contextlib.contextmanager
def _packaged_tools(release):
    root = factory.CHROOTS[release]
    yield ['chroot', root, 'nova-manage'], ['chroot', root, 'placement-manage'], root


def _chroot_templates(release):
    if release in SOURCE_TAGS:
        why = source_unavailable(release)
        if why is not None:
            raise FactoryError('nova %s from source: %s' % (release, why))
        key = factory._key('src', release, _tag_commit(NOVA_GIT, SOURCE_TAGS[release][0]),
                           _tag_commit(PLACEMENT_GIT, SOURCE_TAGS[release][1]))
        tools = _source_tools
    else:
        root = factory.CHROOTS[release]
        if not chroot_ready(release):
            raise FactoryError('no nova %s chroot at %s: run '
                               'test/releases/release-chroot.sh %s'
                               % (release, root, SUITES[release][0]))
        # 2025.1's keys are as they were before the other chroots (its templates stay valid)
        key = factory._key(SUITES[release][1], _chroot_version(root, 'python3-nova'),
                           _chroot_version(root, 'python3-placement'))
        tools = _packaged_tools
    names = {'api': 'cloudctl_tpl_%s_api' % key,
             'placement': 'cloudctl_tpl_%s_placement' % key,
             'cell0': 'cloudctl_tpl_%s_cell0' % key,
             'cell': 'cloudctl_tpl_%s_cell' % key}
    conn = factory._connect()
    try:
        with factory._server_lock(conn, 'cloudctl_release_templates'):
            if all(factory._has_alembic(conn, db) for db in names.values()):
                return names
            with conn.cursor() as cur:
                for db in names.values():
                    cur.execute('DROP DATABASE IF EXISTS `%s`' % db)
                    cur.execute(
                        'CREATE DATABASE `%s` DEFAULT CHARACTER SET utf8' % db)
            # The config files must be visible inside the chroot: the paths given to the tools
            # are the same files seen from there.
            with tools(release) as (nova_manage, placement_manage, root), \
                    tempfile.TemporaryDirectory(dir=os.path.join(root, 'tmp')) as tmp:
                inside = '/tmp/' + os.path.basename(tmp)
                factory._nova_conf(os.path.join(tmp, 'nova.conf'),
                                   names['api'], names['cell'])
                factory._write_conf(os.path.join(tmp, 'placement.conf'),
                                    '[placement_database]\nconnection = %s\n'
                                    % factory.nova_url(names['placement']))
                nm = nova_manage + ['--config-file', inside + '/nova.conf']
                factory._manage(nm + ['api_db', 'sync'],
                                'nova-manage api_db sync (%s)' % release)
                factory._manage(nm + ['cell_v2', 'map_cell0',
                                      '--database_connection',
                                      factory.nova_url(names['cell0'])],
                                'nova-manage cell_v2 map_cell0 (%s)' % release)
                factory._manage(nm + ['cell_v2', 'create_cell', '--name',
                                      'cell1', '--database_connection',
                                      factory.nova_url(names['cell'])],
                                'nova-manage cell_v2 create_cell (%s)' % release)
                factory._manage(nm + ['db', 'sync'],
                                'nova-manage db sync (%s)' % release)
                factory._manage(placement_manage + ['--config-file', inside + '/placement.conf',
                                                    'db', 'sync'],
                                'placement-manage db sync (%s)' % release)
            for db in names.values():
                if not factory._has_alembic(conn, db):
                    raise FactoryError('%s has no alembic version after sync'
                                       % db)
            return names
    finally:
        conn.close()


ALL_RELEASES = RELEASES + tuple(sorted(SOURCE_TAGS))


def templates(release):
    if release == 'zed':
        return factory.ensure_templates()
    if release in SUITES or release in SOURCE_TAGS:
        return _chroot_templates(release)
    raise FactoryError('unknown release %s (known: %s)'
                       % (release, ', '.join(RELEASES)))


def _names(prefix, cells):
    out = {'api': '%s_api' % prefix, 'placement': '%s_placement' % prefix,
           'cell0': '%s_cell0' % prefix}
    out['cells'] = {c: '%s_%s' % (prefix, c) for c in cells}
    return out


def cloud(release, prefix, cells):
    tpl = templates(release)
    names = _names(prefix, cells)
    conn = factory._connect()
    done = []
    try:
        pairs = [(tpl['api'], names['api']),
                 (tpl['placement'], names['placement']),
                 (tpl['cell0'], names['cell0'])]
        pairs += [(tpl['cell'], db) for db in names['cells'].values()]
        for template, target in pairs:
            factory._clone(conn, template, target)
            done.append(target)
    except Exception:
        with conn.cursor() as cur:
            for db in done:
                cur.execute('DROP DATABASE IF EXISTS `%s`' % db)
        raise
    finally:
        conn.close()
    return names


def drop(prefix):
    conn = factory._connect()
    try:
        with conn.cursor() as cur:
            cur.execute('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA '
                        'WHERE SCHEMA_NAME LIKE %s',
                        (prefix.replace('_', '\\_') + '\\_%',))
            for (db,) in cur.fetchall():
                cur.execute('DROP DATABASE IF EXISTS `%s`' % db)
    finally:
        conn.close()


def main(argv):
    p = argparse.ArgumentParser(prog='schemas.py')
    sub = p.add_subparsers(dest='cmd', required=True)
    t = sub.add_parser('templates')
    t.add_argument('--release', required=True, choices=ALL_RELEASES)
    c = sub.add_parser('cloud')
    c.add_argument('--release', required=True, choices=ALL_RELEASES)
    sub.add_parser('source-unavailable').add_argument('--release', required=True,
                                                      choices=sorted(SOURCE_TAGS))
    c.add_argument('--prefix', required=True)
    c.add_argument('--cells', default='cell1')
    d = sub.add_parser('drop')
    d.add_argument('--prefix', required=True)
    args = p.parse_args(argv)
    try:
        if args.cmd == 'templates':
            out = templates(args.release)
        elif args.cmd == 'source-unavailable':
            out = {'why': source_unavailable(args.release)}
        elif args.cmd == 'cloud':
            out = cloud(args.release, args.prefix,
                        [x for x in args.cells.split(',') if x])
        else:
            drop(args.prefix)
            out = {}
        print(json.dumps(out))
        return 0
    except FactoryError as e:
        print('releases: %s' % e, file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
