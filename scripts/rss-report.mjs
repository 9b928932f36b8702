// Preloaded into a benchmarked child process: reports its peak resident set size on exit.
process.on('exit', () => {
  process.stderr.write(`\n[cloudctl-bench] maxrss_kb=${process.resourceUsage().maxRSS}\n`)
})
