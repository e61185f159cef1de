// Rules evaluation cost for `make bench`: decisions per request shape of a typical ruleset, in thread CPU
// time (robust against other processes on a shared machine). Usage: rules-bench FIXTURE_DIR [ITERATIONS]
// where FIXTURE_DIR holds storage.rules and CASES.json (Tests/RulesTests/Fixtures/bench). A third argument,
// `evaluator` or `served`, runs only that pass (for `perf stat` instruction counts of one pass).
// Run under `LD_PRELOAD=…/malloc-count.so` (bench/malloc-count.c) to add heap allocations per decision.
import Foundation
import PortcullisCore
import Rules

/// CPU time of this thread: robust against other processes competing for the 2 cores.
func cpuNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// The preloaded counting allocator's total, when there is one (bench/malloc-count.c).
let mallocCount: (@convention(c) () -> UInt64)? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pc_malloc_count")
    .map { unsafeBitCast($0, to: (@convention(c) () -> UInt64).self) }

let fixtures = URL(fileURLWithPath: CommandLine.arguments[1])
let source = try String(contentsOf: fixtures.appendingPathComponent("storage.rules"), encoding: .utf8)
let compileStart = cpuNanos()
let ruleset = try Ruleset.compile(source, fileName: "storage.rules")
let compileNs = cpuNanos() - compileStart
let cases = try RulesTestFile.parse(Array(try Data(contentsOf: fixtures.appendingPathComponent("CASES.json"))))
print("compile: \(Double(compileNs) / 1000) µs for \(source.utf8.count) bytes; \(cases.count) request shapes")
let iterations = Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 20_000
let only = CommandLine.arguments.dropFirst(3).first
var allowed = 0
// Warm up.
for c in cases { if ruleset.evaluate(c.request).allowed { allowed += 1 } }
var perCase: [(String, Double, Double)] = []
var total: UInt64 = 0
var totalAllocations: UInt64 = 0
for c in cases where only != "served" {
    let allocationsBefore = mallocCount?() ?? 0
    let start = cpuNanos()
    for _ in 0..<iterations { if ruleset.evaluate(c.request).allowed { allowed &+= 1 } }
    let ns = cpuNanos() - start
    let allocations = (mallocCount?() ?? 0) - allocationsBefore
    total += ns
    totalAllocations += allocations
    perCase.append((c.name, Double(ns) / Double(iterations) / 1000, Double(allocations) / Double(iterations)))
}
for (name, us, allocations) in perCase {
    if mallocCount != nil {
        print(String(format: "  %-28@ %6.2f µs %6.2f allocations", name as NSString, us, allocations))
    } else {
        print(String(format: "  %-28@ %6.2f µs", name as NSString, us))
    }
}
let decisions = iterations * cases.count
let mean = Double(total) / Double(decisions) / 1000
if only != "served" {
    print(
        String(
            format: "mean (thread CPU time): %.2f µs per decision (%d decisions; max case %.2f µs)", mean, decisions,
            perCase.map(\.1).max()!))
}
if mallocCount != nil, only != "served" {
    print(String(format: "mean heap allocations: %.2f per decision", Double(totalAllocations) / Double(decisions)))
}

// As the server sees them: principals carrying their token's digest (what `Authenticator` hands out), so
// decisions that read only method, bucket, path and caller come from the memo after the first.
let served = cases.enumerated().map { index, c in
    var r = c.request
    r.auth = r.auth?.with(credentialDigest: CredentialDigest(a: UInt64(index), b: 1, c: 2, d: 3))
    return (c.name, r)
}
for (_, r) in served { if ruleset.evaluate(r).allowed { allowed &+= 1 } }
var servedTotal: UInt64 = 0
var servedAllocations: UInt64 = 0
for (name, r) in served where only != "evaluator" {
    let allocationsBefore = mallocCount?() ?? 0
    let start = cpuNanos()
    for _ in 0..<iterations { if ruleset.evaluate(r).allowed { allowed &+= 1 } }
    let ns = cpuNanos() - start
    let allocations = (mallocCount?() ?? 0) - allocationsBefore
    servedTotal += ns
    servedAllocations += allocations
    let line = String(format: "  served %-28@ %6.2f µs", name as NSString, Double(ns) / Double(iterations) / 1000)
    print(
        mallocCount == nil
            ? line : line + String(format: " %6.2f allocations", Double(allocations) / Double(iterations)))
}
print(
    String(
        format: "served mean (principals with a credential digest, memo on): %.2f µs per decision",
        Double(servedTotal) / Double(decisions) / 1000))
if mallocCount != nil {
    print(
        String(format: "served mean heap allocations: %.2f per decision", Double(servedAllocations) / Double(decisions))
    )
}
if allowed == -1 { print(allowed) }
