import PortcullisCore
import Testing

@Suite struct HexTextTests {
    @Test func encodesEveryByteInLowerCaseAndDecodesItBack() {
        let all = (0...255).map { UInt8($0) }
        let text = HexText.encode(all)
        #expect(text.utf8.count == 512)
        #expect(text.hasPrefix("000102") && text.hasSuffix("fdfeff"))
        #expect(text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        #expect(HexText.decode(text) == all)
        var appended = Array("x=".utf8)
        HexText.append([0xAB, 0x01], to: &appended)
        #expect(String(decoding: appended, as: UTF8.self) == "x=ab01")
        #expect(HexText.encode([UInt8]()).isEmpty)
        #expect(HexText.encode([UInt8](repeating: 0xF0, count: 3)[1...]) == "f0f0")
    }
}
