import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // @oclif/test captures stdout itself; vitest's interception would swallow it.
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: integration files each create their own databases, so files may run in parallel.
    fileParallelism: true,
    maxWorkers: 2,
  },
})
