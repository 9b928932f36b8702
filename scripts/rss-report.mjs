// Preloaded into a benchmarked child process: reports its peak resident set size and CPU time on exit
// (CPU time is the figure that holds when other work shares the machine; wall time is not).
process.on('exit', () => {
  const u = process.resourceUsage()
  process.stderr.write(`\n[cloudctl-bench] maxrss_kb=${u.maxRSS} cpu_ms=${((u.userCPUTime + u.systemCPUTime) / 1000).toFixed(1)}\n`)
})
