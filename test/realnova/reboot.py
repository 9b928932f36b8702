"""After cloudctl's repair, real nova boots what the fault had blocked.

The scenario is played again (the same driver.py method: its rows come out the
same), and where driver.py would dump, the rows cloudctl's repairs wrote on the
MariaDB copy ($REALNOVA_REPAIRED, from the repairs' undo files) are written into
the harness's own databases. Then the boot the real scheduler refused in the
play (notes.blocked_boot) is sent again through the API; the outcome goes to
$REALNOVA_DUMP. The factory runs it (`factory.py reboot`).

Each repaired row is matched by its natural key (compute node: host and
hypervisor_hostname) and must hold, before it is written, exactly the values
the repair found on MariaDB: otherwise the replay differs from the dumped play
and the outcome would prove nothing (fatal).

nova-compute's resource tracker then starts from the repaired row, as it takes
a node's row from the database when it has none in memory; its periodic
update_available_resource stays hung (the seed's fault), so nothing but the
repair changed the row the scheduler and the claim read.

  REALNOVA_REPAIRED=changes.json REALNOVA_DUMP=out.json /usr/bin/python3 \
      -m testtools.run reboot.RepairedClouds.test_pinned_leak
"""
# Before anything of nova, as in driver.py (which says why).
import nova.monkey_patch  # noqa: F401,I100

import datetime
import json
import os
import time

import sqlalchemy as sa

from nova import context as nova_context
from nova.db.main import api as main_db
from nova import objects

import driver

# Only what the repairs are known to write; anything else is a fatal error,
# so a repair that starts writing another table cannot go unproven here.
KEYS = {'compute_nodes': ('host', 'hypervisor_hostname')}


def _same(harness, repaired):
    if harness is None or repaired is None:
        return harness is None and repaired is None
    if isinstance(repaired, (int, float)) and not isinstance(repaired, bool):
        try:
            return float(harness) == float(repaired)
        except (TypeError, ValueError):
            return False
    if isinstance(harness, datetime.datetime):
        return harness.isoformat(sep=' ') == str(repaired)
    return str(harness) == str(repaired)


class RepairedClouds(driver.RealNovaClouds):

    def _write_repaired(self, ctxt, change):
        table = change['table']
        if table not in KEYS:
            raise AssertionError('the reload does not know table %s' % table)
        key = {c: change['key'][c] for c in KEYS[table]}
        cell = objects.HostMapping.get_by_host(ctxt, key['host']).cell_mapping
        with nova_context.target_cell(ctxt, cell) as cctxt:
            engine = main_db.get_context_manager(cctxt).writer.get_engine()
            rows = sa.Table(table, sa.MetaData(), autoload_with=engine)
            with engine.begin() as conn:
                where = sa.and_(rows.c.deleted == 0,
                                *[rows.c[c] == v for c, v in key.items()])
                found = conn.execute(sa.select(rows).where(where)).all()
                if len(found) != 1:
                    raise AssertionError('%s %s: %d live rows in the harness'
                                         % (table, key, len(found)))
                row = found[0]._mapping
                differ = [c for c, v in change['before'].items()
                          if not _same(row[c], v)]
                if differ:
                    raise AssertionError(
                        'the replay differs from the dumped play: %s %s %s '
                        'is %r here, %r on MariaDB before the repair' % (
                            table, key, differ[0], row[differ[0]],
                            change['before'][differ[0]]))
                values = dict(change['after'])
                # The repair stamps updated_at with its own now.
                values['updated_at'] = datetime.datetime.utcnow()
                conn.execute(rows.update().where(rows.c.id == row['id'])
                             .values(**values))
        return key, cell

    def _dump(self):
        with open(os.environ['REALNOVA_REPAIRED']) as f:
            changes = json.load(f)
        target = os.environ['REALNOVA_DUMP']
        ctxt = nova_context.get_admin_context()
        written = []
        for change in changes:
            key, cell = self._write_repaired(ctxt, change)
            written.append(key)
            if change['table'] == 'compute_nodes':
                # nova-compute's resource tracker takes the row as stored,
                # as on a node it holds no row for yet.
                with nova_context.target_cell(ctxt, cell) as cctxt:
                    node = objects.ComputeNode.get_by_host_and_nodename(
                        cctxt, key['host'], key['hypervisor_hostname'])
                rt = self.computes[key['host']].manager.rt
                rt.compute_nodes[key['hypervisor_hostname']] = node
        blocked = self.notes['blocked_boot']
        flavor = {'rn.pinned': self.pinned, 'rn.pinned-big': self.pinned_big,
                  'rn.small': self.small}[blocked['flavor']]
        body = self._build_server(name='after-repair', flavor_id=flavor,
                                  networks='none', host=blocked['host'])
        server = self.admin_api.post_server({'server': body})
        for _ in range(50):
            server = self.admin_api.get_server(server['id'])
            if server['status'] in ('ACTIVE', 'ERROR'):
                break
            time.sleep(0.2)
        doc = {
            'written': written,
            'before_repair': {'server': blocked['server'],
                              'fault': blocked['fault']},
            'after_repair': {
                'server': server['id'],
                'status': server['status'],
                'host': server.get('OS-EXT-SRV-ATTR:host'),
                'fault': (server.get('fault') or {}).get('message'),
            },
        }
        tmp = target + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(doc, f)
        os.replace(tmp, target)
