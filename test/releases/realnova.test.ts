/**
 * Clouds that real nova 2025.1 wrote (issue 12, item 4): the nine scenarios played by nova 31 /
 * placement 13's own harness in the Debian 13 chroot, through the same suite and expectations as
 * Zed's (realnova-release.ts). 2026.1 and 2026.2: realnova-2026.1.test.ts, realnova-2026.2.test.ts.
 */
import {SUBSET_2025_1} from './realnova-subset.js'
import {releaseRealNovaSuite} from './realnova-release.js'

releaseRealNovaSuite('2025.1', SUBSET_2025_1)
