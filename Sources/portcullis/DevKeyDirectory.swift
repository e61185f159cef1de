import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// The development keys `make run` (scripts/run.sh) keeps in `./data/dev-keys/`: the RS256 private key whose
/// public half its gateway trusts, and one-line files naming the issuer and audience that gateway requires.
/// `portcullis token` signs with them when given no key, so a token minted in the repository directory works
/// against `make run` as is.
struct DevKeyDirectory {
    /// Relative to the working directory, as scripts/run.sh creates it.
    static let path = "data/dev-keys"

    let privateKeyPath: String
    let issuer: String?
    let audience: String?

    /// The directory's contents, or nil when there is no readable dev private key here.
    static func current() -> DevKeyDirectory? {
        let key = "\(path)/jwt-private.pem"
        guard access(key, R_OK) == 0 else { return nil }
        return DevKeyDirectory(privateKeyPath: key, issuer: line("jwt-issuer"), audience: line("jwt-audience"))
    }

    /// The trimmed first line of a small file in the directory (nil when absent or empty).
    private static func line(_ name: String) -> String? {
        guard case .success(let bytes) = Terminal.readFile("\(path)/\(name)", limit: 4096) else { return nil }
        // Lines by bytes: CR LF is one `Character`, equal to neither "\n" nor "\r".
        let first = bytes.split(whereSeparator: { $0 == 0x0A || $0 == 0x0D }).first ?? []
        let line = String(decoding: first, as: UTF8.self).trimmingSpaces()
        return line.isEmpty ? nil : line
    }
}
