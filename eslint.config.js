import js from '@eslint/js'
import tseslint from 'typescript-eslint'

const driver = {name: 'mysql2', message: 'Only src/lib/db talks to the databases.'}
const driverPromise = {name: 'mysql2/promise', message: 'Only src/lib/db talks to the databases.'}
const terminal = [
  {name: 'chalk', message: 'Only src/lib/output colours text.'},
  {name: 'cli-table3', message: 'Only src/lib/output draws tables.'},
]
const sideEffects = [
  driver,
  driverPromise,
  ...terminal,
  {name: '@oclif/core', message: 'The pure core does not know about the CLI.'},
  {name: '@inquirer/prompts', message: 'The pure core never prompts.'},
  {name: 'node:fs', message: 'The pure core does no I/O.'},
  {name: 'fs', message: 'The pure core does no I/O.'},
  {name: 'node:fs/promises', message: 'The pure core does no I/O.'},
]

export default tseslint.config(
  {ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'examples/**']},
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', {argsIgnorePattern: '^_', varsIgnorePattern: '^_'}],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/lib/db/**', 'src/lib/output/**'],
    rules: {'no-restricted-imports': ['error', {paths: [driver, driverPromise, ...terminal]}]},
  },
  {
    files: ['src/lib/output/**/*.ts'],
    rules: {'no-restricted-imports': ['error', {paths: [driver, driverPromise]}]},
  },
  {
    files: ['src/lib/domain/**/*.ts', 'src/lib/engine/**/*.ts', 'src/lib/checks/**/*.ts', 'src/lib/repairs/**/*.ts', 'src/lib/capacity/**/*.ts', 'src/lib/scenario/**/*.ts'],
    rules: {'no-restricted-imports': ['error', {paths: sideEffects}]},
  },
  {
    // Plain Node scripts (the bench's RSS preload, the bin shim) run outside TypeScript.
    files: ['**/*.mjs', 'bin/**/*.js'],
    languageOptions: {globals: {process: 'readonly', console: 'readonly'}},
  },
  {
    files: ['test/**/*.ts', 'scripts/**/*.ts'],
    rules: {'@typescript-eslint/no-non-null-assertion': 'off'},
  },
)
