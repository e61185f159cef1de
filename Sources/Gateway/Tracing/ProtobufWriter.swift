/// The few protobuf wire-format encodings OTLP needs (https://protobuf.dev/programming-guides/encoding/):
/// varints, fixed64, length-delimited bytes and nested messages. Fields are written in the order given; a
/// proto3 default (0, empty) is skipped by the callers where the schema says it may be.
struct ProtobufWriter {
    private(set) var bytes: [UInt8] = []

    enum WireType: UInt8 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
        case fixed32 = 5
    }

    mutating func tag(_ field: Int, _ type: WireType) { varint(UInt64(field) << 3 | UInt64(type.rawValue)) }

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func varintField(_ field: Int, _ value: UInt64) {
        tag(field, .varint)
        varint(value)
    }

    mutating func fixed64Field(_ field: Int, _ value: UInt64) {
        tag(field, .fixed64)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func bytesField(_ field: Int, _ value: some Collection<UInt8>) {
        tag(field, .lengthDelimited)
        varint(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func stringField(_ field: Int, _ value: String) { bytesField(field, value.utf8) }

    /// A big-endian 64-bit id as 8 bytes (OTLP span ids; trace ids are two of them).
    mutating func idField(_ field: Int, _ ids: UInt64...) {
        tag(field, .lengthDelimited)
        varint(UInt64(ids.count * 8))
        for id in ids {
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: id >> UInt64(shift)))
            }
        }
    }

    /// A nested message: written by `body` into its own buffer, then length-prefixed.
    mutating func messageField(_ field: Int, _ body: (inout ProtobufWriter) -> Void) {
        var inner = ProtobufWriter()
        body(&inner)
        bytesField(field, inner.bytes)
    }
}
