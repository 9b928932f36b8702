/**
 * A host's availability zone (get_host_availability_zone): one function, asked by nova-api's zone
 * check in the engine, the capacity planner's zones and `hosts list` (its e2e test covers the last).
 */
import {describe, expect, it} from 'vitest'

import {hostPlaces} from '../../src/lib/capacity/places.js'
import {hostZones} from '../../src/lib/domain/availability-zone.js'
import {buildModel} from '../../src/lib/domain/model.js'
import {defaultSchedulerConfig} from '../../src/lib/engine/config.js'
import {availableZones} from '../../src/lib/engine/request-filters.js'
import {CloudBuilder} from '../support/builders.js'

function cloud() {
  const b = new CloudBuilder()
  b.addCell('cell1')
  // ids in creation order: the zone of h2 is the first (lowest id) aggregate with one
  b.addAggregate({name: 'plain'})
  b.addAggregate({name: 'az-b', metadata: {availability_zone: 'zone-b'}})
  b.addAggregate({name: 'az-a', metadata: {availability_zone: 'zone-a'}})
  b.addHost('cell1', {host: 'h1', vcpus: 4, memory_mb: 4096, local_gb: 40, aggregates: ['plain']})
  b.addHost('cell1', {host: 'h2', vcpus: 4, memory_mb: 4096, local_gb: 40, aggregates: ['az-a', 'az-b']})
  return b.build()
}

describe('host -> availability zone', () => {
  it('is the first aggregate by id with a zone, else default_availability_zone', () => {
    const s = cloud()
    const zoneOf = hostZones(s.nova_api.aggregates, 'dflt')
    expect([zoneOf('h1'), zoneOf('h2'), zoneOf('elsewhere'), zoneOf(null)]).toEqual(['dflt', 'zone-b', 'dflt', 'dflt'])
    // the order aggregates come in does not matter, their ids do
    expect(hostZones([...s.nova_api.aggregates].reverse(), 'dflt')('h2')).toBe('zone-b')
  })

  it('the scheduler and the capacity planner answer with it, default_availability_zone included', () => {
    const model = buildModel(cloud())
    const cfg = {...defaultSchedulerConfig(), default_availability_zone: 'dflt'}
    expect(availableZones(model, cfg)).toEqual(['dflt', 'zone-b'])
    const places = hostPlaces(model, cfg)
    expect([places.azOf('h1'), places.azOf('h2')]).toEqual(['dflt', 'zone-b'])
    expect(places.aggregatesOf('h1')).toEqual(['plain'])
  })
})
