/**
 * The pure half of the least-privilege check (src/lib/repairs/privileges.ts): which statements a plan
 * makes the account run, how the servers' denials read, and the GRANT statements the hint offers.
 * test/db/grants.test.ts runs them against real accounts.
 */
import {describe, expect, it} from 'vitest'

import type {CheckStep, Step} from '../../src/lib/repairs/plan.js'
import {type MissingGrant, LOCKING_READ, accountSql, describeMissing, grantStatements, parseDenial, planProbes} from '../../src/lib/repairs/privileges.js'

const del: Step = {db: 'placement', table: 'allocations', op: 'delete', key: {id: 7}, expect: {consumer_id: 'c1', used: 2}, why: 'leak'}
const del2: Step = {...del, key: {id: 8}}
const check: CheckStep = {db: 'cell:u1', table: 'instances', op: 'check', where: {uuid: 'c1', deleted: 0}, rows: [], why: 'guard'}
const ins: Step = {
  db: 'nova_api',
  table: 'host_mappings',
  op: 'insert',
  unique: {host: 'h1'},
  values: {host: 'h1', cell_id: 3, created_at: {$now: true}},
  why: 'map',
}
const upd: Step = {db: 'cell:u1', table: 'compute_nodes', op: 'update', key: {id: 4}, expect: {mapped: 0}, set: {mapped: 1}, why: 'mapped'}

describe('planProbes: the statements a plan runs, one per shape', () => {
  it('locks every row it relies on, then writes; the same shape twice is asked once', () => {
    const probes = planProbes([check, del, del2, ins, upd])
    expect(probes.map((p) => [p.db, p.table, p.privilege])).toEqual([
      ['cell:u1', 'instances', 'SELECT'],
      ['placement', 'allocations', 'SELECT'],
      ['placement', 'allocations', 'DELETE'],
      ['nova_api', 'host_mappings', 'SELECT'],
      ['nova_api', 'host_mappings', 'INSERT'],
      ['cell:u1', 'compute_nodes', 'SELECT'],
      ['cell:u1', 'compute_nodes', 'UPDATE'],
    ])
    expect(probes[0].sql).toBe('SELECT * FROM `instances` WHERE `uuid` = ? AND `deleted` = ? FOR UPDATE')
    expect(probes[2].sql).toBe('DELETE FROM `allocations` WHERE `id` = ? AND `consumer_id` = ? AND `used` = ?')
    expect(probes[4].sql).toBe('INSERT INTO `host_mappings` (`host`, `cell_id`, `created_at`) VALUES (?, ?, UTC_TIMESTAMP())')
    expect(probes[6].sql).toBe('UPDATE `compute_nodes` SET `mapped` = ? WHERE `id` = ? AND `mapped` = ?')
  })

  it('an undo asks what each restore does: DELETE an inserted row, INSERT a deleted one, UPDATE a changed one, nothing for an unchanged one', () => {
    const r = (before: Record<string, number> | null, after: Record<string, number> | null): Step => ({
      db: 'placement',
      table: 'allocations',
      op: 'restore',
      key: {id: 1},
      before,
      after,
      why: 'undo',
    })
    const privs = (s: Step) => planProbes([s]).map((p) => p.privilege)
    expect(privs(r(null, {id: 1, used: 2}))).toEqual(['SELECT', 'DELETE'])
    expect(privs(r({id: 1, used: 2}, null))).toEqual(['SELECT', 'INSERT'])
    expect(privs(r({id: 1, used: 2}, {id: 1, used: 3}))).toEqual(['SELECT', 'UPDATE'])
    expect(privs(r({id: 1, used: 2}, {id: 1, used: 2}))).toEqual(['SELECT'])
  })

  it('a NULL in a guard is IS NULL, as the executor writes it', () => {
    expect(planProbes([{...check, where: {uuid: 'c1', deleted_at: null}}])[0].sql).toBe(
      'SELECT * FROM `instances` WHERE `uuid` = ? AND `deleted_at` IS NULL FOR UPDATE',
    )
  })
})

describe("parseDenial: the servers' own words", () => {
  it.each([
    ["DELETE command denied to user 'ro'@'127.0.0.1' for table `p`.`allocations`", 'DELETE', undefined],
    ["DELETE command denied to user 'ro'@'localhost' for table 'allocations'", 'DELETE', undefined],
    ["UPDATE command denied to user 'ro'@'localhost' for column 'mapped' in table 'compute_nodes'", 'UPDATE', 'mapped'],
    ["SELECT with locking clause command denied to user 'ro'@'localhost' for table 'instances'", LOCKING_READ, undefined],
    ["Access denied for user 'ro'@'%' to database 'nova'", 'INSERT', undefined],
  ])('%s', (message, privilege, column) => {
    expect(parseDenial(message, 'INSERT')).toEqual(column === undefined ? {privilege} : {privilege, column})
  })
})

describe('the refusal and its hint', () => {
  const m = (over: Partial<MissingGrant>): MissingGrant => ({
    db: 'placement',
    label: 'placement',
    database: 'placement',
    table: 'allocations',
    privilege: 'DELETE',
    account: 'audit@10.%',
    ...over,
  })

  it('names the account as SQL, the host after the last @', () => {
    expect(accountSql('nova@10.0.%')).toBe("'nova'@'10.0.%'")
    expect(accountSql("o'k@@h")).toBe("'o\\'k@'@'h'")
  })

  it('one GRANT per table, LOCK TABLES per database, columns in parentheses', () => {
    expect(
      grantStatements([
        m({}),
        m({privilege: 'SELECT'}),
        m({db: 'cell:u', database: 'nova_cell1', table: 'compute_nodes', privilege: 'UPDATE', column: 'mapped'}),
        m({db: 'cell:u', database: 'nova_cell1', table: 'instances', privilege: LOCKING_READ}),
        m({db: 'cell:u', database: 'nova_cell1', table: 'instance_faults', privilege: LOCKING_READ}),
      ]),
    ).toEqual([
      "GRANT DELETE, SELECT ON `placement`.`allocations` TO 'audit'@'10.%'",
      "GRANT UPDATE (`mapped`) ON `nova_cell1`.`compute_nodes` TO 'audit'@'10.%'",
      "GRANT LOCK TABLES ON `nova_cell1`.* TO 'audit'@'10.%'",
    ])
  })

  it('one line naming database, table and grant, then how many more', () => {
    expect(describeMissing([m({})])).toBe("the database account 'audit'@'10.%' of placement lacks DELETE on placement.allocations")
    const cell = m({db: 'cell:u', label: 'cell cell1', database: 'nova_cell1', table: 'instances', privilege: LOCKING_READ})
    const line = describeMissing([
      cell,
      m({}),
      m({table: 'consumers'}),
      {...cell, table: 'instance_faults'},
      {...cell, database: 'nova_api', table: 'build_requests'},
    ])
    expect(line).toBe(
      "the database account 'audit'@'10.%' of cell cell1 (nova_cell1) lacks LOCK TABLES on nova_cell1 (MySQL's locking read of instances needs it, or UPDATE or DELETE on the table) and 3 more (DELETE on placement.allocations, DELETE on placement.consumers, LOCK TABLES on nova_api)",
    )
    expect(line).not.toContain('\n')
  })
})
