import Auth
import Crypto
import Gateway
import PortcullisCore

#if canImport(Glibc)
import Glibc
#endif

/// `portcullis token`: mint a development JWT signed with a local private key (RS256/ES256…) or an HMAC secret,
/// so `make run` users can try authenticated calls with curl. Prints the token on stdout.
///
/// Without `--key` or `--hmac-secret` it signs with the development key `make run` created
/// (`DevKeyDirectory`), with that gateway's issuer and audience unless given.
enum TokenCommand {
    static let help = """
        portcullis token [--key FILE | --hmac-secret FILE] [OPTIONS]

          --key FILE          PEM private key (RSA or EC P-256/P-384) to sign with
          --hmac-secret FILE  file holding an HMAC secret (same file as serve --jwt-hmac-secret)
                              (neither: the key `make run` keeps in ./\(DevKeyDirectory.path)/, with its
                              issuer and audience as defaults)
          --alg ALG           RS256|RS384|RS512|ES256|ES384|HS256|HS384|HS512
                              (default: HS256 with --hmac-secret, else RS256 or ES256/ES384 from the key)
          --kid ID            key id for the header (match a JWKS kid)
          --uid UID           subject, becomes request.auth.uid (default: dev-user)
          --claims JSON       extra claims, e.g. '{"admin":true,"email":"a@b.c"}'
          --ttl SECONDS       lifetime (default: 3600)
          --issuer ISS        iss claim (serve --jwt-issuer)
          --audience AUD      aud claim (serve --jwt-audience)

        Example:
          head -c 32 /dev/urandom | base64 > hs.key
          portcullis serve --jwt-hmac-secret hs.key --rules storage.rules &
          curl -H "Authorization: Bearer $(portcullis token --hmac-secret hs.key --uid alice)" \\
               http://127.0.0.1:8080/v0/b/default-bucket/o/users%2Falice%2Fa.txt

        """

    static func run(_ arguments: [String]) -> Never {
        if arguments.contains("--help") || arguments.contains("-h") {
            Terminal.print(help)
            exit(0)
        }
        var values = SubcommandOptions(
            arguments, command: "token",
            valued: ["key", "hmac-secret", "alg", "kid", "uid", "claims", "ttl", "issuer", "audience"],
            allowsPositional: false)

        var pem: String?
        var hmacSecret: [UInt8]?
        switch (values["key"], values["hmac-secret"]) {
        case (nil, nil):
            guard let dev = DevKeyDirectory.current() else {
                Terminal.fail(
                    "token: give --key FILE or --hmac-secret FILE (or run it where `make run` created ./\(DevKeyDirectory.path)/)"
                )
            }
            pem = String(decoding: ServeSecrets.read(dev.privateKeyPath, option: .jwtKeys), as: UTF8.self)
            if values["issuer"] == nil { values["issuer"] = dev.issuer }
            if values["audience"] == nil { values["audience"] = dev.audience }
        case (let key?, nil):
            pem = String(decoding: ServeSecrets.read(key, option: .jwtKeys), as: UTF8.self)
        case (nil, let secretPath?):
            do {
                hmacSecret = try SecretFiles.secret(
                    from: ServeSecrets.read(secretPath, option: .jwtHMACSecret),
                    option: .jwtHMACSecret, path: secretPath)
            } catch {
                Terminal.fail("token: \(error.description)")
            }
        default:
            Terminal.fail("token: give one of --key FILE or --hmac-secret FILE, not both")
        }

        let claims = values.claims(command: "token")
        var ttl = 3600
        if let text = values["ttl"] {
            guard let parsed = Int(text), parsed > 0, parsed <= 10 * 365 * 86_400 else {
                Terminal.fail("token: --ttl must be a positive number of seconds")
            }
            ttl = parsed
        }
        let algorithm = values["alg"] ?? defaultAlgorithm(pem: pem)
        do {
            let token = try DevToken.mint(
                signingKeyPEM: pem, hmacSecret: hmacSecret, algorithm: algorithm, keyID: values["kid"],
                uid: values["uid"] ?? "dev-user", claims: claims, ttlSeconds: ttl, issuer: values["issuer"],
                audience: values["audience"], now: .now())
            Terminal.print(token)
            exit(0)
        } catch {
            Terminal.fail("token: \(error.message)")
        }
    }

    /// HS256 for a secret; for a key, the algorithm its kind supports.
    private static func defaultAlgorithm(pem: String?) -> String {
        guard let pem else { return "HS256" }
        guard let key = try? PrivateKey(pem: pem) else { return "RS256" }
        switch key.kind {
        case .rsa: return "RS256"
        case .ec(let curve): return curve == .p384 ? "ES384" : "ES256"
        }
    }
}
