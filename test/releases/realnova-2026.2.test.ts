/** The nine real-nova scenarios as nova 34 / placement 16 (2026.2, Debian sid, the newest release) play them: realnova-release.ts. */
import {DRIVER_NINE} from './realnova-subset.js'
import {releaseRealNovaSuite} from './realnova-release.js'

releaseRealNovaSuite('2026.2', process.env.CLOUDCTL_REALNOVA_ALL === '1' ? undefined : DRIVER_NINE)
