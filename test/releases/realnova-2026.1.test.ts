/** The nine real-nova scenarios as nova 33 / placement 15 (2026.1, Debian forky) play them: realnova-release.ts. */
import {SUBSET_BETWEEN} from './realnova-subset.js'
import {releaseRealNovaSuite} from './realnova-release.js'

releaseRealNovaSuite('2026.1', SUBSET_BETWEEN)
