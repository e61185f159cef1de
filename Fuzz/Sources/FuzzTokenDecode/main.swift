import Auth
import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// `FUZZ_TOKEN_SEED_DIR=dir` writes the minted valid tokens there as seed files (see README.md).
@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>>>
) -> CInt {
    _ = fixture.validTokens.count
    if let dir = getenv("FUZZ_TOKEN_SEED_DIR").map({ String(cString: $0) }) {
        for (i, token) in fixture.validTokens.enumerated() {
            guard let file = fopen("\(dir)/valid-\(i)", "w") else { continue }
            fputs(token, file)
            fclose(file)
        }
    }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var verdicts: [String] = []
    for verifier in fixture.verifiers {
        do {
            let verified = try verifier.verify(bytes, keys: fixture.keys, now: fixture.now)
            guard let lastDot = bytes.lastIndex(of: UInt8(ascii: ".")),
                fixture.signedParts.contains(String(decoding: bytes[..<lastDot], as: UTF8.self))
            else { fatalError("accepted a token this target did not sign") }
            verdicts.append("ok:\(verified.principal.uid)")
        } catch {
            verdicts.append(error.reason.rawValue)
        }
    }
    if verdicts[0] != verdicts[1] { fatalError("signature engines disagree: \(verdicts)") }
    return 0
}
