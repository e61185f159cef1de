extension Timestamp {
    /// This instant plus `duration` (wrapping on overflow, which no real time reaches).
    public func adding(_ duration: Duration) -> Timestamp {
        Timestamp(nanosecondsSinceEpoch: nanosecondsSinceEpoch &+ duration.totalNanoseconds)
    }
}

extension Duration {
    /// The whole duration in nanoseconds (sub-nanosecond parts dropped).
    public var totalNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
