import Auth
import Gateway
import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// `portcullis service-account`: issue, list and revoke the service accounts the gateway authenticates
/// (`serve --service-accounts FILE`). `create` makes an RSA key, writes the key file in Google's format (the
/// only copy of the private key) and adds the account's public key and grant to the accounts file; `remove`
/// takes an account out (revocation, effective when the gateway reloads the file on SIGHUP).
enum ServiceAccountCommand {
    static let help = """
        portcullis service-account create NAME (--admin | --uid UID [--claims JSON]) [OPTIONS]
        portcullis service-account list [--accounts FILE]
        portcullis service-account remove NAME|EMAIL [--accounts FILE]

          --admin             the account acts as admin (bypasses the rules)
          --uid UID           the account acts as this uid: request.auth.uid, judged by the rules
          --claims JSON       token claims for request.auth.token, e.g. '{"role":"worker"}'
          --accounts FILE     the accounts file `serve --service-accounts` reads
                              (default: $PORTCULLIS_SERVICE_ACCOUNTS_FILE, else ./service-accounts.json)
          --out FILE          where the key file goes (default: ./NAME.json; never overwritten)
          --project ID        project_id and the email's project part (default: portcullis)
          --public-url URL    the gateway's external URL; the key file's token_uri is URL/oauth2/v4/token
                              (default: $PORTCULLIS_PUBLIC_URL, else http://127.0.0.1:8080)
          --token-uri URL     the token_uri to write, verbatim (instead of --public-url)

        The key file works unchanged with google-cloud-storage (Client.from_service_account_json), firebase-admin
        (credentials.Certificate) and gcsfs (token=FILE). Send the gateway SIGHUP after create or remove.

        """

    static func run(_ arguments: [String]) -> Never {
        if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") {
            Terminal.print(help)
            exit(arguments.isEmpty ? 2 : 0)
        }
        let options = SubcommandOptions(
            Array(arguments.dropFirst()), command: "service-account",
            valued: ["uid", "claims", "accounts", "out", "project", "public-url", "token-uri"], flags: ["admin"])
        let positional = options.positional
        let environment = ProcessEnvironment.current()
        let accountsPath =
            options["accounts"] ?? environment["PORTCULLIS_SERVICE_ACCOUNTS_FILE"] ?? "service-accounts.json"
        switch arguments[0] {
        case "create":
            guard positional.count == 1 else { Terminal.fail("service-account create: give one NAME") }
            create(name: positional[0], values: options, accountsPath: accountsPath, environment: environment)
        case "list":
            guard positional.isEmpty else { Terminal.fail("service-account list: unexpected argument") }
            for account in readAccounts(accountsPath, missingIsEmpty: false) {
                switch account.grant {
                case .admin: Terminal.print("\(account.email)\tadmin\t\(account.keyID)")
                case .principal(let uid, _): Terminal.print("\(account.email)\tuid=\(uid)\t\(account.keyID)")
                }
            }
            exit(0)
        case "remove":
            guard positional.count == 1 else { Terminal.fail("service-account remove: give one NAME or EMAIL") }
            remove(positional[0], accountsPath: accountsPath)
        default:
            Terminal.fail("service-account: unknown subcommand \"\(arguments[0])\" (create, list, remove)")
        }
    }

    private static func create(
        name: String, values: SubcommandOptions, accountsPath: String, environment: [String: String]
    ) -> Never {
        let grant: ServiceAccountGrant
        switch (values.flags.contains("admin"), values["uid"]) {
        case (true, nil):
            guard values["claims"] == nil else { Terminal.fail("service-account create: --claims goes with --uid") }
            grant = .admin
        case (false, let uid?):
            guard !uid.isEmpty, uid.unicodeScalars.count <= 128 else {
                Terminal.fail("service-account create: --uid must be 1-128 characters")
            }
            grant = .principal(uid: uid, claims: values.claims(command: "service-account create"))
        default:
            Terminal.fail("service-account create: give exactly one of --admin or --uid UID")
        }
        let tokenURI: String
        if let given = values["token-uri"] {
            guard values["public-url"] == nil else {
                Terminal.fail("service-account create: give --public-url or --token-uri, not both")
            }
            tokenURI = given
        } else {
            let base = values["public-url"] ?? environment["PORTCULLIS_PUBLIC_URL"] ?? "http://127.0.0.1:8080"
            guard base.lowercased().hasPrefix("http://") || base.lowercased().hasPrefix("https://") else {
                Terminal.fail("service-account create: --public-url \(base): must start with http:// or https://")
            }
            var trimmed = Substring(base)
            while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            tokenURI = trimmed + OAuthTokenSurface.path
        }
        var accounts = readAccounts(accountsPath, missingIsEmpty: true)
        let made: ServiceAccountKeyFile
        do {
            made = try ServiceAccountKeyFile.create(
                name: name, project: values["project"] ?? "portcullis", tokenURI: tokenURI, grant: grant)
        } catch {
            Terminal.fail("service-account create: \(error.message)")
        }
        guard !accounts.contains(where: { $0.email.bytesEqual(made.account.email) }) else {
            Terminal.fail("service-account create: \(made.account.email) is already in \(accountsPath)")
        }
        let keyPath = values["out"] ?? "\(name).json"
        if let problem = FileWriting.write(Array(made.json.utf8), to: keyPath, mode: 0o600, replace: false) {
            Terminal.fail("service-account create: --out \(keyPath): \(problem)")
        }
        accounts.append(made.account)
        if let problem = FileWriting.write(
            Array(ServiceAccountsFile.render(accounts).utf8), to: accountsPath, mode: 0o644, replace: true)
        {
            unlink(keyPath)
            Terminal.fail("service-account create: --accounts \(accountsPath): \(problem)")
        }
        Terminal.print("\(made.account.email)")
        Terminal.printError(
            "key file: \(keyPath) (keep it secret); registered in \(accountsPath); token_uri \(tokenURI)")
        exit(0)
    }

    private static func remove(_ nameOrEmail: String, accountsPath: String) -> Never {
        let accounts = readAccounts(accountsPath, missingIsEmpty: false)
        let kept = accounts.filter { account in
            !(account.email.bytesEqual(nameOrEmail) || account.email.utf8.starts(with: Array((nameOrEmail + "@").utf8)))
        }
        guard kept.count < accounts.count else {
            Terminal.fail("service-account remove: no account \(nameOrEmail) in \(accountsPath)")
        }
        guard accounts.count - kept.count == 1 else {
            Terminal.fail("service-account remove: \(nameOrEmail) names several accounts; give the email")
        }
        if let problem = FileWriting.write(
            Array(ServiceAccountsFile.render(kept).utf8), to: accountsPath, mode: 0o644, replace: true)
        {
            Terminal.fail("service-account remove: \(accountsPath): \(problem)")
        }
        Terminal.printError("removed; send the gateway SIGHUP to revoke it now")
        exit(0)
    }

    private static func readAccounts(_ path: String, missingIsEmpty: Bool) -> [ServiceAccount] {
        if missingIsEmpty, access(path, F_OK) != 0, errno == ENOENT { return [] }
        switch Terminal.readFile(path) {
        case .success(let bytes):
            do {
                return try ServiceAccountsFile.parse(bytes)
            } catch {
                Terminal.fail("service-account: \(path): \(error.message)")
            }
        case .failure(let failure): Terminal.fail("service-account: \(path): \(failure.reason)")
        }
    }
}

/// Writing small files whole: a new file with `replace: false` (never overwriting: a key file), or a temporary
/// file renamed over the old one (an accounts file is never seen half-written by a reloading gateway).
enum FileWriting {
    /// nil on success, else the reason.
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t, replace: Bool) -> String? {
        let target = replace ? path + ".tmp-\(getpid())" : path
        let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                unlink(target)
                return reason
            }
            offset += n
        }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced else {
            unlink(target)
            return "fsync failed"
        }
        if replace, rename(target, path) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(target)
            return reason
        }
        return nil
    }
}
