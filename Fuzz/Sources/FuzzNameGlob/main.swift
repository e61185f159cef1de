// libFuzzer entry point for `PortcullisCore.NameGlob` (the JSON API's `matchGlob`).
//
// Input: the pattern (bytes up to the first LF, decoded as UTF-8 with replacement), then the name (the rest,
// raw bytes). Invariants:
// - `NameGlob` refuses exactly the patterns `GlobReference` (an independent parser) refuses, with the same error;
// - a compiled pattern's cost per scalar is within the limits (≤ 6 passes over ≤ 17 words), and matching a
//   name spends at most `matchCost(byteCount:)` word operations;
// - invalid UTF-8 never matches, and `matches(utf8:)` agrees with `matches(_ String)`;
// - the answer is the reference's: its alternatives expanded into plain sequences (patterns with at most 64
//   expansions, which includes every pattern without braces) and matched by a memoized recursive matcher.
import PortcullisCore

/// Reference matching is O(expansions × tokens × name length); larger cases are only checked for the rest.
private let referenceBudget = 4_000_000

private func same(_ a: GlobReference.Failure, _ b: NameGlob.Error) -> Bool {
    switch (a, b) {
    case (.tooLong, .tooLong), (.tooManyAlternatives, .tooManyAlternatives): true
    case (.unbalanced(let x), .unbalanced(let y)): x == y
    default: false
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNameGlob(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = UnsafeBufferPointer(start: start, count: count)
    let newline = input.firstIndex(of: 0x0A) ?? input.endIndex
    let pattern = String(decoding: input[..<newline], as: UTF8.self)
    let name = newline < input.endIndex ? Array(input[(newline + 1)...]) : []

    let reference = GlobReference.compile(pattern)
    let glob: NameGlob
    do {
        glob = try NameGlob(pattern)
    } catch {
        guard case .failure(let refused) = reference, same(refused, error) else {
            preconditionFailure("NameGlob refuses \(pattern.debugDescription) (\(error)); the reference: \(reference)")
        }
        return 0
    }
    guard case .success(let expansions) = reference else {
        preconditionFailure("NameGlob accepts \(pattern.debugDescription); the reference: \(reference)")
    }
    precondition(glob.workPerScalar <= 6 * 17, "\(glob.workPerScalar) word operations per scalar")
    precondition(glob == (try? NameGlob(pattern)), "equality")

    var work = 0
    let matched = glob.matches(utf8: name, work: &work)
    precondition(work > 0 && work <= glob.matchCost(byteCount: name.count), "work \(work) past the bound")
    guard let text = String(validating: name, as: UTF8.self) else {
        precondition(!matched, "invalid UTF-8 matched")
        return 0
    }
    precondition(glob.matches(text) == matched, "String and UTF-8 answers differ")
    guard let expansions else { return 0 }
    let scalars = text.unicodeScalars.map(\.value)
    let size = expansions.reduce(0) { $0 + ($1.count + 1) * (scalars.count + 1) }
    if size <= referenceBudget {
        let expected = GlobReference.matches(expansions, scalars)
        precondition(
            expected == matched, "\(pattern.debugDescription) ~ \(text.debugDescription): \(matched), not \(expected)")
    }
    return 0
}
