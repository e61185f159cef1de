#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// libm functions the standard library lacks (`math.pow`).
enum MathShim {
    static func pow(_ x: Double, _ y: Double) -> Double {
        #if canImport(Glibc)
        Glibc.pow(x, y)
        #elseif canImport(Darwin)
        Darwin.pow(x, y)
        #endif
    }
}
