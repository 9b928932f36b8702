export {run} from './lib/cli/oclif.js'
