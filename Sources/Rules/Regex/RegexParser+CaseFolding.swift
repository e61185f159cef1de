/// Case-insensitive matching (`(?i)`) as RE2 does it: by Unicode simple case folding *orbits*. `k`, `K` and
/// KELVIN SIGN are one orbit, `s`, `S` and LONG S another, `µ`, `Μ` and `μ` a third; a folded literal or class
/// matches every member of each orbit it touches, however large the class range.
extension RegexParser {
    /// Every member of `c`'s orbit, `c` included (just `[c]` for a scalar without case).
    static func caseVariants(_ c: UInt32) -> [UInt32] { CaseOrbits.table[c] ?? [c] }

    /// The orbit members of every cased scalar in `range` that lie outside `range`.
    static func caseVariants(outside range: ClosedRange<UInt32>) -> [UInt32] {
        let members = CaseOrbits.members
        var low = 0, high = members.count  // first member >= range.lowerBound
        while low < high {
            let mid = (low + high) / 2
            if members[mid] < range.lowerBound { low = mid + 1 } else { high = mid }
        }
        var out: [UInt32] = []
        var i = low
        while i < members.count, members[i] <= range.upperBound {
            for v in CaseOrbits.table[members[i]]! where !range.contains(v) { out.append(v) }
            i += 1
        }
        return out
    }
}

/// The orbits, built once from the Unicode case mappings Swift carries (the toolchain's Unicode version).
///
/// Scalars fold together when they share `lowercase(uppercase(c))` (single-scalar mappings only), which is
/// simple case folding for every scalar but the Turkic dotted and dotless i (U+0130, U+0131): those fold only
/// in Turkic locales, which RE2 leaves out, so they stay alone.
private enum CaseOrbits {
    /// Scalar → its orbit (ascending), for every scalar whose orbit has another member.
    static let table: [UInt32: [UInt32]] = build()
    /// The keys of `table`, ascending, for range lookups.
    static let members: [UInt32] = table.keys.sorted()

    private static func single(_ mapping: String) -> UInt32? {
        var scalars = mapping.unicodeScalars.makeIterator()
        guard let first = scalars.next(), scalars.next() == nil else { return nil }
        return first.value
    }

    private static func key(_ u: Unicode.Scalar) -> UInt32 {
        if u.value == 0x130 || u.value == 0x131 { return u.value }
        let upper = single(u.properties.uppercaseMapping) ?? u.value
        guard let upperScalar = Unicode.Scalar(upper) else { return u.value }
        return single(upperScalar.properties.lowercaseMapping) ?? upper
    }

    private static func build() -> [UInt32: [UInt32]] {
        var orbits: [UInt32: [UInt32]] = [:]
        for value in UInt32(0)...0x1_FFFF {  // no scalar above the SMP has case
            guard let u = Unicode.Scalar(value), u.properties.changesWhenCaseMapped else { continue }
            orbits[key(u), default: []].append(value)
        }
        var table: [UInt32: [UInt32]] = [:]
        for (key, var members) in orbits {
            if !members.contains(key) { members.append(key) }
            guard members.count > 1 else { continue }
            members.sort()
            for member in members { table[member] = members }
        }
        return table
    }
}
