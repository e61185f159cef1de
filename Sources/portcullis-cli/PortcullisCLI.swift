import Foundation
import StorageClient
#if canImport(Glibc)
import Glibc
#endif

/// `portcullis-cli`: curl-friendly object operations for ops teams, built on the StorageClient SDK.
///
/// A separate executable from the server (`portcullis`) so an ops laptop links only the client library,
/// not the server, SQLite or libcurl upstream code.
@main
struct PortcullisCLI {
    static let usage = """
    usage: portcullis-cli [--server URL] [--token TOKEN | --token-file FILE] COMMAND ...

    Commands:
      ls [--page-size N] gs://BUCKET/PREFIX/     list one folder (all pages unless --page-size)
      stat gs://BUCKET/OBJECT                    print the object's metadata as JSON
      cp [--recursive] SRC DST                   upload (local → gs://) or download (gs:// → local)
      rm gs://BUCKET/OBJECT ...                  delete objects
      url [--signed [--expires SECONDS]] gs://BUCKET/OBJECT   download URL (or an expiring signed URL)
      set-meta [--content-type T] [--cache-control C] [--meta K=V]... [--remove-meta K]... gs://BUCKET/OBJECT

    Options:
      --server URL        the Portcullis base URL (env PORTCULLIS_URL; default http://127.0.0.1:8080)
      --token TOKEN       ID token sent as `Authorization: Firebase TOKEN` (env PORTCULLIS_TOKEN)
      --token-file FILE   read the token from FILE (env PORTCULLIS_TOKEN_FILE)
    """

    static func main() async {
        var args = Array(CommandLine.arguments.dropFirst())
        let env = ProcessInfo.processInfo.environment
        var server = env["PORTCULLIS_URL"] ?? "http://127.0.0.1:8080"
        var token = env["PORTCULLIS_TOKEN"]
        var tokenFile = env["PORTCULLIS_TOKEN_FILE"]
        while let first = args.first, first.hasPrefix("--") {
            args.removeFirst()
            switch first {
            case "--server": server = take(&args, first)
            case "--token": token = take(&args, first)
            case "--token-file": tokenFile = take(&args, first)
            case "--help", "-h": print(usage); exit(0)
            default: fail("unknown option \(first)", code: 2)
            }
        }
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else { fail("cannot read \(tokenFile)", code: 2) }
            token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let command = args.first else { print(usage); exit(2) }
        args.removeFirst()
        let fixedToken = token
        let storage: Storage
        do {
            let provider: (@Sendable () async throws -> String?)? = fixedToken.map { value in { @Sendable in value } }
            storage = try Storage(url: server, tokenProvider: provider)
        } catch {
            fail("\(error)", code: 2)
        }
        do {
            switch command {
            case "ls": try await Commands.list(storage, &args)
            case "stat": try await Commands.stat(storage, &args)
            case "cp": try await Commands.copy(storage, &args)
            case "rm": try await Commands.remove(storage, &args)
            case "url": try await Commands.url(storage, &args)
            case "set-meta": try await Commands.setMetadata(storage, &args)
            default: fail("unknown command \(command)\n\(usage)", code: 2)
            }
        } catch let error as StorageError {
            fail(error.description, code: 1)
        } catch {
            fail("\(error)", code: 1)
        }
    }

    static func take(_ args: inout [String], _ option: String) -> String {
        guard !args.isEmpty else { fail("\(option) needs a value", code: 2) }
        return args.removeFirst()
    }

    static func fail(_ message: String, code: Int32) -> Never {
        FileHandle.standardError.write(Data("portcullis-cli: \(message)\n".utf8))
        exit(code)
    }
}
