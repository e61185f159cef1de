import Testing

@testable import Rules

@Suite struct LibraryTests {
    @Test(arguments: [
        ("'hello'.size()", "5"), ("'ÄbC'.lower()", "'Äbc'"), ("'äbc'.upper()", "'äBC'"),
        ("'  a b \\n'.trim()", "'a b'"),
        ("'a/b/c'.split('/')", "['a', 'b', 'c']"), ("'a1b22c'.split('[0-9]+')", "['a', 'b', 'c']"),
        ("'a,b,,'.split(',')", "['a', 'b']"), ("''.split(',')", "['']"), ("'abc'.split('')", "['a', 'b', 'c']"),
        ("'banana'.replace('a', 'o')", "'bonono'"), ("'a.b'.replace('.', '-')", "'---'"),
        ("'a.b'.replace('\\\\.', '-')", "'a-b'"),
        ("'abc'.replace('b*', '-')", "'-a--c-'"), ("'x'.replace('(', 'y')", "error"),
        ("'image/png'.matches('image/.*')", "true"), ("'text/html;image/png'.matches('image/.*')", "false"),
        ("'ximage/png'.matches('image/.*')", "false"), ("'abc'.matches('b')", "false"),
        ("'abc'.matches('.*b.*')", "true"),
        ("'cat.PNG'.matches('(?i).*\\\\.png')", "true"), ("'abc'.matches('*.png')", "error"),
        ("'aa'.matches('(a)\\\\1')", "error"),
        ("'ab'.matches('a(?=b)b')", "error"), ("'abc'.matches(request.path[3])", "false"), ("1.matches('1')", "error"),
        ("'é'.toUtf8() == b'\\xC3\\xA9'", "true"), ("'abc'.size() == 3", "true"), ("'x'.nope()", "error"),
    ])
    func strings(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("[1, 2, 3].size()", "3"), ("['a', 'b'].join('/')", "'a/b'"), ("[1].join(',')", "error"),
        ("[1, 2, 3].hasAll([1, 3])", "true"), ("[1, 2].hasAll([1, 4])", "false"), ("[1, 2].hasAny([4, 2])", "true"),
        ("[1, 2].hasAny([])", "false"), ("[1, 1, 2].hasOnly([1, 2, 3])", "true"), ("[1, 4].hasOnly([1, 2])", "false"),
        ("[1, 2].concat([3])", "[1, 2, 3]"), ("[1, 2, 1, 3].removeAll([1])", "[2, 3]"),
        ("[1, 1, 2].toSet().size()", "2"),
        ("[1, 2].hasAll([1].toSet())", "true"), ("[1].hasAll(1)", "error"),
    ])
    func lists(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("{'a': 1, 'b': 2}.size()", "2"), ("{'b': 1, 'a': 2}.keys()", "['a', 'b']"),
        ("{'b': 1, 'a': 2}.values()", "[2, 1]"),
        ("{'a': 1}.get('a', 0)", "1"), ("{'a': 1}.get('z', 0)", "0"), ("{'a': {'b': 1}}.get(['a', 'b'], 0)", "1"),
        ("{'a': {'b': 1}}.get(['a', 'c'], 0)", "0"), ("{'a': 1}.get(1, 0)", "error"),
        ("{'a': 1, 'b': 2}.keys().hasAll(['a'])", "true"),
        ("{'a': 1, 'b': 2, 'c': 3}.diff({'a': 1, 'b': 5, 'd': 4}).addedKeys()", "set('c')"),
        ("{'a': 1, 'b': 2, 'c': 3}.diff({'a': 1, 'b': 5, 'd': 4}).removedKeys()", "set('d')"),
        ("{'a': 1, 'b': 2, 'c': 3}.diff({'a': 1, 'b': 5, 'd': 4}).changedKeys()", "set('b')"),
        ("{'a': 1, 'b': 2, 'c': 3}.diff({'a': 1, 'b': 5, 'd': 4}).unchangedKeys()", "set('a')"),
        ("{'a': 1, 'b': 2, 'c': 3}.diff({'a': 1, 'b': 5, 'd': 4}).affectedKeys() == ['b', 'c', 'd'].toSet()", "true"),
        ("{'a': 1}.diff({'a': 1.0}).changedKeys().size()", "1"), ("{'a': 1}.diff(1)", "error"), ("{1: 2}", "error"),
    ])
    func maps(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("[1, 2].toSet().union([2, 3].toSet()).size()", "3"), ("[1, 2].toSet().intersection([2, 3].toSet())", "set(2)"),
        ("[1, 2].toSet().difference([2, 3].toSet())", "set(1)"), ("[1, 2].toSet().hasAll([1])", "true"),
        ("[1, 2].toSet().hasAny([5])", "false"), ("[1, 2].toSet().hasOnly([1, 2, 3])", "true"),
        ("2 in [1, 2].toSet()", "true"),
    ])
    func sets(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("path('/a/b/c')[1]", "'b'"), ("path('a/b/c')[1:]", "path('/b/c')"), ("path('a/b').size()", "2"),
        ("path('/users/$(uid)/x').bind({'uid': 'u1'}) == /users/u1/x", "true"), ("path(1)", "error"),
        ("/users/$(uid)/x", "compile"),
    ])
    func paths(_ expr: String, _ expected: String) {
        let got = TS.eval(expr)
        if expected == "compile" {
            #expect(got.hasPrefix("compile error"), "\(expr)")
        } else {
            #expect(got == expected, "\(expr)")
        }
    }

    @Test(arguments: [
        ("timestamp.date(2024, 2, 29)", "timestamp(2024-02-29T00:00:00Z)"), ("timestamp.date(2023, 2, 29)", "error"),
        ("timestamp.value(1700000000123)", "timestamp(2023-11-14T22:13:20.123Z)"),
        ("timestamp.value(1700000000123).toMillis()", "1700000000123"),
        ("request.time.year()", "2026"), ("request.time.month()", "1"), ("request.time.day()", "15"),
        ("request.time.hours()", "12"), ("request.time.minutes()", "30"), ("request.time.seconds()", "45"),
        ("request.time.nanos()", "123000000"), ("request.time.dayOfWeek()", "4"),
        ("timestamp.date(2024, 1, 7).dayOfWeek()", "7"),
        ("timestamp.date(2024, 12, 31).dayOfYear()", "366"), ("request.time.date()", "timestamp(2026-01-15T00:00:00Z)"),
        ("request.time.time()", "duration(45045.123s)"),
        ("request.time + duration.value(1, 'd')", "timestamp(2026-01-16T12:30:45.123Z)"),
        ("duration.value(1, 'h') + request.time", "timestamp(2026-01-15T13:30:45.123Z)"),
        ("request.time - duration.value(1, 'w')", "timestamp(2026-01-08T12:30:45.123Z)"),
        ("request.time - request.time.date() == request.time.time()", "true"),
        ("request.time - timestamp.date(2026, 1, 15) > duration.value(12, 'h')", "true"),
        ("duration.value(90, 's').seconds()", "90"), ("duration.value(1500, 'ms').nanos()", "500000000"),
        ("duration.value(-1500, 'ms').nanos()", "-500000000"), ("duration.value(1, 'y')", "error"),
        ("duration.time(1, 2, 3, 4)", "duration(3723.000000004s)"),
        ("duration.abs(duration.value(-5, 's'))", "duration(5s)"),
        ("duration.value(1, 'm') - duration.value(30, 's') == duration.value(30000, 'ms')", "true"),
        ("timestamp.date(9999, 12, 31) + duration.value(1, 'd')", "error"), ("request.time + 1", "error"),
        ("string(timestamp.date(2024, 1, 2))", "'2024-01-02T00:00:00Z'"),
    ])
    func timestampsAndDurations(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("math.abs(-10)", "10"), ("math.abs(-1.5)", "1.5"), ("math.ceil(1.2)", "2"), ("math.floor(-1.2)", "-2"),
        ("math.round(2.5)", "3"), ("math.round(2.4)", "2"), ("math.round(-2.5)", "-2"), ("math.isNaN(0.0 / 0)", "true"),
        ("math.isInfinite(1.0 / 0)", "true"), ("math.pow(2, 10)", "1024.0"), ("math.sqrt(16)", "4.0"),
        ("math.abs('x')", "error"),
    ])
    func math(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("hashing.md5('hello world').toHexString()", "'5EB63BBBE01EEED093CB22BB8F5ACDC3'"),
        ("hashing.md5(b'hello world').toBase64()", "'XrY7u-Ae7tCTyyK7j1rNww=='"),
        ("hashing.sha256('abc').toHexString()", "'BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD'"),
        ("hashing.sha256('').toHexString()", "'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855'"),
        ("hashing.crc32('123456789').toHexString()", "'CBF43926'"),
        ("hashing.crc32c('123456789').toHexString()", "'E3069283'"),
        ("hashing.md5(1)", "error"), ("b'abc'.size()", "3"), ("b'\\xff\\x00'.toHexString()", "'FF00'"),
    ])
    func hashingAndBytes(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test(arguments: [
        ("int('2')", "2"), ("int('-17')", "-17"), ("int(2.9)", "2"), ("int(-2.9)", "-2"), ("int('x')", "error"),
        ("int(1e30)", "error"),
        ("int(true)", "error"), ("float('1.5')", "1.5"), ("float(2)", "2.0"), ("float('x')", "error"),
        ("string(2.0)", "'2.0'"),
        ("string(null)", "'null'"), ("string(1e7)", "'1.0E7'"), ("string(0.0001)", "'1.0E-4'"),
        ("string(-1.5e-7)", "'-1.5E-7'"), ("string(123456789.5)", "'1.234567895E8'"), ("string(0.001)", "'0.001'"),
        ("string(1e300 * 10)", "'1.0E301'"), ("string(true)", "'true'"), ("string(12)", "'12'"),
        ("string([1])", "error"),
        ("bool('true')", "true"), ("bool('false')", "false"), ("bool('yes')", "error"), ("path('a/b') == /a/b", "true"),
    ])
    func conversions(_ expr: String, _ expected: String) { #expect(TS.eval(expr) == expected, "\(expr)") }

    @Test func latlng() {
        #expect(TS.eval("latlng.value(1.0, 2.0).latitude()") == "1.0")
        #expect(TS.eval("latlng.value(1.0, 2.0).longitude()") == "2.0")
        #expect(TS.eval("latlng.value(91.0, 0.0)") == "error")
        let d = TS.eval("int(latlng.value(0.0, 0.0).distance(latlng.value(0.0, 1.0)))")
        #expect(d == "111195")
    }
}
