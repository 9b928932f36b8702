import {describe, expect, it} from 'vitest'

import {cloudRelease, databaseRelease, rangeName} from '../../src/lib/domain/release.js'

describe('release detection from alembic heads and service versions', () => {
  it('names the heads nova 26 / placement 8 (Zed) and nova 31 / placement 13 (2025.1) leave', () => {
    expect(databaseRelease('nova', 'ccb0fa1a2252').name).toBe('zed')
    expect(databaseRelease('nova', '2903cd72dc14').name).toBe('2025.1')
    // nova_api and placement heads span several releases: only the cells pin it down
    expect(databaseRelease('nova_api', 'b30f573d3377')).toMatchObject({first: 'yoga', last: 'zed', name: 'yoga-zed'})
    expect(databaseRelease('nova_api', 'cdeec0c85668')).toMatchObject({first: '2023.1', last: '2025.1', name: '2023.1-2025.1'})
    expect(databaseRelease('placement', 'a082b8bb98d0')).toMatchObject({first: '2023.1', last: '2025.1'})
    const zed = cloudRelease(databaseRelease('nova_api', 'b30f573d3377'), databaseRelease('placement', '422ece571366'), {c1: databaseRelease('nova', 'ccb0fa1a2252', {serviceVersion: 64})})
    expect(zed.name).toBe('zed')
    const epoxy = cloudRelease(databaseRelease('nova_api', 'cdeec0c85668'), databaseRelease('placement', 'a082b8bb98d0'), {c1: databaseRelease('nova', '2903cd72dc14', {serviceVersion: 68})})
    expect(epoxy).toMatchObject({name: '2025.1', first: '2025.1', last: '2025.1'})
  })

  it('narrows a head shared by two releases with the newest service version, and lets the schema win a disagreement', () => {
    expect(databaseRelease('nova', 'd60bddf7a903').name).toBe('2024.x')
    expect(databaseRelease('nova', 'd60bddf7a903', {serviceVersion: 67}).name).toBe('2024.2')
    // computes still on Zed code against a schema already synced to 2025.1 (rolling upgrade)
    expect(databaseRelease('nova', '2903cd72dc14', {serviceVersion: 64}).name).toBe('2025.1')
  })

  it('marks schemas older than Zed, and knows nothing of an unknown head', () => {
    expect(databaseRelease('nova', '16f1fbcab42b')).toMatchObject({name: 'yoga', too_old: true})
    expect(databaseRelease('nova', null, {legacyMigrate: true})).toMatchObject({too_old: true})
    expect(databaseRelease('placement', 'b5c396305c25').too_old).toBe(true)
    expect(databaseRelease('nova_api', 'b30f573d3377').too_old).toBeUndefined()
    const future = databaseRelease('nova', 'abcdef123456')
    expect(future.name).toMatch(/unknown \(alembic abcdef123456, newer than 2025\.1\?\)/)
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
