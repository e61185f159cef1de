import Testing

@testable import Crypto

@Suite struct AEADTests {
    let key = AEADKey(HKDF.sha256(secret: Array("a signing secret".utf8), info: Array("test".utf8), length: 32))

    @Test func roundTripsAndHidesThePlaintext() throws {
        let message = Array("{\"uid\":\"alice\",\"email\":\"a@example.com\"}".utf8)
        let box = key.seal(message, associatedData: Array("purpose".utf8))
        #expect(box.count == message.count + AEADKey.overhead)
        #expect(!box.indices.dropLast(message.count - 1).contains { Array(box[$0..<($0 + 5)]) == Array("alice".utf8) })
        #expect(key.open(box, associatedData: Array("purpose".utf8)) == message)
        #expect(key.open(key.seal([]), associatedData: []) == [])
    }

    @Test func refusesEveryAlteration() {
        let box = key.seal(Array("payload".utf8), associatedData: [1, 2, 3])
        #expect(key.open(box, associatedData: [1, 2, 4]) == nil)
        #expect(key.open(box) == nil)
        for i in box.indices {
            var flipped = box
            flipped[i] ^= 0x01
            #expect(key.open(flipped, associatedData: [1, 2, 3]) == nil, "bit flipped at \(i)")
        }
        #expect(key.open(Array(box.dropLast()), associatedData: [1, 2, 3]) == nil)
        #expect(key.open(Array(box.prefix(AEADKey.overhead - 1))) == nil)
        let other = AEADKey(HKDF.sha256(secret: Array("another secret".utf8), info: Array("test".utf8), length: 32))
        #expect(other.open(box, associatedData: [1, 2, 3]) == nil)
    }

    @Test func noncesDiffer() {
        #expect(key.seal([1, 2, 3]) != key.seal([1, 2, 3]))
    }

    /// RFC 5869 test case 1.
    @Test func hkdfMatchesTheRFCVector() {
        let ikm = [UInt8](repeating: 0x0B, count: 22)
        let salt: [UInt8] = Array(0x00...0x0C)
        let info: [UInt8] = Array(0xF0...0xF9)
        let okm = HKDF.sha256(secret: ikm, salt: salt, info: info, length: 42)
        let hex = okm.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
            .joined()
        #expect(hex == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }
}
