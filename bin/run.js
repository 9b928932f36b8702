#!/usr/bin/env node
import {execute, settings} from '@oclif/core'

// bin/run.js always runs the built dist/. Without this, NODE_ENV=test|development (vitest sets it,
// so do some operators' shells) makes oclif map dist/ back to src/*.ts, which plain node cannot load.
settings.enableAutoTranspile = false

await execute({dir: import.meta.url})
