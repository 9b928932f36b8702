// Injected into each command's CommonJS bundle (scripts/bundle-commands.mjs) for import.meta.url,
// which CommonJS has not: createRequire(import.meta.url) finds packages from the bundle's place.
/* global __filename -- the bundle's, CommonJS */
import {pathToFileURL} from 'node:url'

export const importMetaUrl = pathToFileURL(__filename).href
