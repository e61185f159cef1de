import PortcullisCore
import Rules
import Service

/// The "try: curl …" advice printed once the server is ready: a first request that works under the rules in
/// force, or, when the rules deny it, the rule or credential that would let it through.
///
/// The request advised is the first bucket's root listing (`GET /v0/b/{bucket}/o`), judged exactly as a live
/// anonymous listing of prefix `""` is: rules `list` on folder `""`. A newcomer who copies the line must get
/// a 200, not a 403 that looks like a broken server; so a denied listing is advised with the admin key (which
/// bypasses the rules) when one is configured, and otherwise the advice names the rule that would allow it.
enum StartupHint {
    /// The lines to log, in order. `rules` is nil when no rules file is loaded (everything is denied).
    static func lines(
        url: String, bucket: String, rules: (any RulesEngine)?, adminKeyFile: String?, trustsEmulatorOwner: Bool
    ) -> [String] {
        let listURL = "'\(url)/v0/b/\(bucket)/o'"
        let decision = rules?.explain(RulesRequest(method: .list, bucket: bucket, path: "", delimiter: "/"))
        if decision?.allowed == true { return ["try: curl \(listURL)"] }
        let why =
            rules == nil
            ? "no rules file is loaded (--rules), so every request but the admin's is denied"
            : "the rules in force deny an anonymous list of bucket \(bucket)'s root"
        if let adminKeyFile {
            return [
                "try: curl -H \"Authorization: Bearer $(cat \(shellQuoted(adminKeyFile)))\" \(listURL)"
                    + "   (\(why); the admin key bypasses the rules)"
            ]
        }
        if trustsEmulatorOwner {
            return ["try: curl -H 'Authorization: Bearer owner' \(listURL)   (\(why); --dev-trust-emulator-owner)"]
        }
        return [
            "\(why): curl \(listURL) answers 403",
            "to allow it: `\(allowListRule)` inside `match /b/{bucket}/o` of the rules file, "
                + "or a token the rules allow (curl -H 'Authorization: Bearer ID_TOKEN' …), or --admin-key FILE "
                + "(then -H \"Authorization: Bearer $(cat FILE)\")",
        ]
    }

    /// The statement the advice names: it lets anyone list every folder, and nothing else.
    static let allowListRule = "match /{allPaths=**} { allow list; }"

    /// `path` as one single-quoted shell word.
    private static func shellQuoted(_ path: String) -> String {
        // Cut at every `'` byte: a quote with a combining mark after it is one `Character`, and would stay raw.
        "'" + path.bytesSplit(separator: UInt8(ascii: "'"), omittingEmptySubsequences: false).joined(separator: "'\\''")
            + "'"
    }
}
