import {describe, expect, it} from 'vitest'

import {cloudRelease, databaseRelease, rangeName} from '../../src/lib/domain/release.js'

describe('release detection from alembic heads and service versions', () => {
  it('names the heads nova 26 / placement 8 (Zed) and nova 31 / placement 13 (2025.1) leave', () => {
    expect(databaseRelease('nova', 'ccb0fa1a2252').name).toBe('zed')
    // nova 32 and 33 add no migration: 2025.1's head is theirs too, and the services tell them apart
    expect(databaseRelease('nova', '2903cd72dc14').name).toBe('2025.1-2026.1')
    expect(databaseRelease('nova', '2903cd72dc14', {serviceVersion: 68}).name).toBe('2025.1')
    expect(databaseRelease('nova', '2903cd72dc14', {serviceVersion: 70}).name).toBe('2025.2')
    expect(databaseRelease('nova', '2903cd72dc14', {serviceVersion: 72}).name).toBe('2026.1')
    // nova_api and placement heads span several releases: only the cells pin it down
    // (placed by the migration directories at each release tag: nova 27 adds no API migration)
    expect(databaseRelease('nova_api', 'b30f573d3377')).toMatchObject({first: 'yoga', last: '2023.1', name: 'yoga-2023.1'})
    // the newest heads may also be those of a release newer than cloudctl has read
    expect(databaseRelease('nova_api', 'cdeec0c85668')).toMatchObject({first: '2023.2', last: '2026.2', open: true, name: '2023.2 or later'})
    expect(databaseRelease('placement', 'a082b8bb98d0')).toMatchObject({first: '2023.2', last: '2026.2', open: true})
    // nova 30 (2024.2) adds no cell migration; d60bddf7a903 is a revision inside nova 31's
    expect(databaseRelease('nova', '13863f4e1612').name).toBe('2024.x')
    expect(databaseRelease('nova', 'd60bddf7a903').name).toBe('2025.1')
    const zed = cloudRelease(databaseRelease('nova_api', 'b30f573d3377'), databaseRelease('placement', '422ece571366'), {
      c1: databaseRelease('nova', 'ccb0fa1a2252', {serviceVersion: 64}),
    })
    expect(zed.name).toBe('zed')
    const epoxy = cloudRelease(databaseRelease('nova_api', 'cdeec0c85668'), databaseRelease('placement', 'a082b8bb98d0'), {
      c1: databaseRelease('nova', '2903cd72dc14', {serviceVersion: 68}),
    })
    expect(epoxy).toMatchObject({name: '2025.1', first: '2025.1', last: '2025.1'})
    expect(epoxy.open).toBeUndefined()
  })

  it('names 2026.1 and 2026.2 by their services, and says "or later" where the code is not known', () => {
    const api = databaseRelease('nova_api', 'cdeec0c85668')
    const placement = databaseRelease('placement', 'a082b8bb98d0')
    // nova 33 writes 2025.1's schemas; its computes write service version 72 (2025.1's is 68)
    expect(cloudRelease(api, placement, {c1: databaseRelease('nova', '2903cd72dc14', {serviceVersion: 72})})).toMatchObject({
      name: '2026.1',
      first: '2026.1',
      last: '2026.1',
    })
    // nova 34 adds a cell migration (ab450ba04102) and writes 74
    const g = cloudRelease(api, placement, {c1: databaseRelease('nova', 'ab450ba04102', {serviceVersion: 74})})
    expect(g).toMatchObject({name: '2026.2', first: '2026.2', last: '2026.2'})
    expect(g.open).toBeUndefined()
    // no live service, or one newer than cloudctl has read: the schema alone
    expect(cloudRelease(api, placement, {c1: databaseRelease('nova', '2903cd72dc14')}).name).toBe('2025.1-2026.1')
    expect(cloudRelease(api, placement, {c1: databaseRelease('nova', 'ab450ba04102')})).toMatchObject({name: '2026.2 or later', open: true})
    expect(cloudRelease(api, placement, {c1: databaseRelease('nova', 'ab450ba04102', {serviceVersion: 80})}).name).toBe('2026.2 or later')
    // computes of 2026.1 on a cell already synced to 2026.2 (rolling upgrade): the schema wins
    expect(databaseRelease('nova', 'ab450ba04102', {serviceVersion: 72}).name).toBe('2026.2 or later')
    // a cell still on 2026.1 code and schema beside one on 2026.2
    expect(
      cloudRelease(api, placement, {
        a: databaseRelease('nova', '2903cd72dc14', {serviceVersion: 72}),
        b: databaseRelease('nova', 'ab450ba04102', {serviceVersion: 74}),
      }).name,
    ).toBe('mixed (2026.1 to 2026.2)')
  })

  it('narrows a head shared by two releases with the newest service version, and lets the schema win a disagreement', () => {
    expect(databaseRelease('nova', '13863f4e1612').name).toBe('2024.x')
    expect(databaseRelease('nova', '13863f4e1612', {serviceVersion: 67}).name).toBe('2024.2')
    // computes still on Zed code against a schema already synced to 2025.1 (rolling upgrade)
    expect(databaseRelease('nova', '2903cd72dc14', {serviceVersion: 64}).name).toBe('2025.1-2026.1')
  })

  it('marks schemas older than Zed, and knows nothing of an unknown head', () => {
    expect(databaseRelease('nova', '16f1fbcab42b')).toMatchObject({name: 'yoga', too_old: true})
    expect(databaseRelease('nova', null, {legacyMigrate: true})).toMatchObject({too_old: true})
    expect(databaseRelease('placement', 'b5c396305c25').too_old).toBe(true)
    expect(databaseRelease('nova_api', 'b30f573d3377').too_old).toBeUndefined()
    const future = databaseRelease('nova', 'abcdef123456')
    expect(future.name).toMatch(/unknown \(alembic abcdef123456, newer than 2026\.2\?\)/)
    expect(future.too_old).toBeUndefined()
    expect(databaseRelease('nova', null).name).toBe('unknown (no alembic_version)')
  })

  it('calls databases of different releases mixed, and placement does not decide alone', () => {
    const mixed = cloudRelease(databaseRelease('nova_api', 'cdeec0c85668'), databaseRelease('placement', 'a082b8bb98d0'), {
      a: databaseRelease('nova', 'ccb0fa1a2252'),
      b: databaseRelease('nova', '2903cd72dc14'),
    })
    expect(mixed.name).toBe('mixed (zed to 2025.1)')
    expect(mixed.first).toBeUndefined()
    const none = cloudRelease(databaseRelease('nova_api', null), databaseRelease('placement', 'a082b8bb98d0'), {})
    expect(none.name).toBe('unknown')
    expect(rangeName({first: '2023.1', last: '2023.2'})).toBe('2023.x')
  })
})
