// libFuzzer target for JWT verification (Auth.TokenVerifier): arbitrary bytes as bearer tokens, checked by
// both signature engines against a configured key set.
//
// Invariants (a violation traps, so libFuzzer saves the input):
//   1. no crash, in either engine;
//   2. the OpenSSL and libjwt engines reach the same verdict (same reason class, or both accept);
//   3. an accepted token's signed part (`header.payload`) is one this file minted: nothing else can verify,
//      since the fuzzer has no private key.
import Auth
import Crypto
import PortcullisCore

// TEST-ONLY KEYS. Generated for this fuzz target alone (so saved crash inputs stay reproducible); they protect
// nothing and must never be used anywhere else.
let fixtureRSAPrivatePEM = """
    -----BEGIN PRIVATE KEY-----
    MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDF2pccGXtjMEbE
    C+c/rydO8D+Q1qz1NGRQvTKzMD7IqIN50Ru10bCFbn4Iib4RUTjSUrG3WpwyAlks
    RR1kYesj7oFLogXk/LVmcAZ1pkjjgqp1T4CSLkQPPrgm7NmOQzwUwFnnjx7Z0s84
    1vNRWLO4f6X3uIdXa3cWDWSFhVaqxPCZEZej8rP8tbcxcQURg2INJylMhPjIlsmV
    1z5vol9bYaTnkQYMurq3utoJvZAm64Suw2pyhsq/9nnRIhpYJlS0sJ7nEvDYN2+o
    zFRHAqo9mGOQ/mlvBrzDqvN/ljyQUcmOZptehcPyNxgZEblbGg+x6hOdcnmTrcM/
    XMx/ostZAgMBAAECggEABUrQie7gjwmmiu3qlJiBy6m/eYdUfwaUvFgjOAnNVB61
    zZdbT2S5fQg0lNPiYqIyi+WsXUQuM2Q+sGF05M99s6tYiAZgc/ySeZf7hEAbaQKA
    vryOqtpT9bhuwpPJSfXgcImonfoFEDyEUHfncECYJhI8BUFJVXxJZiybiLrFU7H+
    yLZ58UiwiF0U+QKe9lKeDr03K1xZItSMhZr8RXCl7kUcA1JJ4vMYKKcR22McLGYh
    wOSbn4q+wEx+lzoAcebyjNNs+ijFtGfLmSZsHxd5smZ3qCvxEkMH3S3pJgjeJ8eC
    PU8yq8hktd6WcQkzM/Ft25+yeD+xqrQaX9KdNtroBQKBgQD4Ddmo6oR/iQ/xlVrO
    EtIjs0yPyZQkEOtkQKBaNQAHUQ2zZifBMwMq1/bwxJVo9Vw/lWatWzWJ8OQcuA8O
    AkKZXq0rK9MdV121ptQ1fc17A9w9oHfiwKFCA75NC8FrpQxtQ9LH4msJkrvM+Kqr
    RlK6DywQll96+qVVlfz0FyT9uwKBgQDMMROeu2H29o0wWR2qqcLbuZz8cHb3AnxS
    LgC6/CSNpbQjrcMM4lX+mxhkKkqJG+bebr18FV16McF56Fus/QrzAjFWADbwGa0v
    bZgip2LspsykUBdbkjJZRuTcyR0TaqmvHrP07gCpZPzICrIVEeljyxzr0N8ErFfc
    OKMEJnc/+wKBgQCPFB4aartmfP6vUIECIKUJZqCgx5sleoTsXMKhhbSwg7YtZp1D
    uVL4YX3Uvu+XjP9axahmEhg9qq9JSXmVkQQtRwkHv82UPRKWdtYszJW7gSyGd4rv
    RkE9vL8F3eQBXUBfviFUnmszKGoe/sgi5vtMyveV0cbdProjNdKkUL1LhQKBgBDL
    IH/3jVEQagBF9AirOZl0pJKmdUJPdAYWPn0ia6cyr6QXkGko3EW6X8EtMUAhiVVV
    6kOgRjXcjbsG/zM1BIeD8KbQEbShh/rUmqSO+7XW6hHBfIpNddKd4AjAiaGlLht2
    /Pnx8R/9bETPjGHrPTS16cUDQrRRsFAuYEnhGAGtAoGAYTU2wm5a/uto5hOq2j56
    wfCVDsZ9wButz6/0B56mU1ypYnHHDe2wTq/+ES6rKImIZUN5pbnNUhaZOlnZy4Ok
    M6KQnJHakhufqwexXpbOfcLMCz1gGD/INPNN0q8ODAnaKexdnrdVAOi40z9lIC3y
    VtGaNH4wVfYy/v27Vr8kLHQ=
    -----END PRIVATE KEY-----
    """

let fixtureECPrivatePEM = """
    -----BEGIN PRIVATE KEY-----
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7aZ95cdEr0OLiSBU
    hkno8Xq2mUhPAXuXRI6hkvxlQ8OhRANCAATpWcz3GadpchOcVx6io5RpG5VoiwqF
    f3qZH6Cg2VZ1uU13jzs4vzXMYlZjsK7WbqaC1i1WwYUx6Nwm2aiqBD9p
    -----END PRIVATE KEY-----
    """

let fixtureHMACSecret = Array("fuzz-only-hmac-secret-not-a-secret".utf8)

/// Everything the target needs, built once.
struct Fixture: Sendable {
    let verifiers: [TokenVerifier]
    let keys: KeySet
    let now = Timestamp(nanosecondsSinceEpoch: 1_800_000_000 * 1_000_000_000)
    /// Tokens minted here (seed material) and their signed parts.
    let validTokens: [String]
    let signedParts: Set<String>

    static func make() -> Fixture {
        do {
            let rsa = try PrivateKey(pem: fixtureRSAPrivatePEM)
            let ec = try PrivateKey(pem: fixtureECPrivatePEM)
            let rsaPublic = try PublicKey(pem: rsa.publicKeyPEM())
            let ecPublic = try PublicKey(pem: ec.publicKeyPEM())
            let keys = KeySet(keys: [
                VerificationKey(keyID: "rsa", publicKey: rsaPublic),
                VerificationKey(keyID: "ec", publicKey: ecPublic, algorithm: .es256),
                VerificationKey(keyID: nil, publicKey: rsaPublic),
            ])
            var configuration = AuthConfiguration(
                issuer: "https://issuer.fuzz", audience: "fuzz",
                hmacSecret: fixtureHMACSecret)
            let verifiers = SignatureEngine.allCases.map { engine -> TokenVerifier in
                configuration.signatureEngine = engine
                return TokenVerifier(configuration: configuration)
            }
            let now = Timestamp(nanosecondsSinceEpoch: 1_800_000_000 * 1_000_000_000)
            let claims: [String: JSONValue] = [
                "user_id": .string("u1"), "auth_time": .int(1_799_999_000), "email": .string("a@fuzz.test"),
                "firebase": .object(["sign_in_provider": .string("password")]), "n": .double(1.5),
                "list": .array([.int(1), .string("x"), .null, .bool(true)]),
            ]
            func mint(_ alg: String, _ pem: String?, _ kid: String?) throws -> String {
                try DevToken.mint(
                    signingKeyPEM: pem, hmacSecret: fixtureHMACSecret, algorithm: alg, keyID: kid, uid: "u1",
                    claims: claims, ttlSeconds: 3600, issuer: "https://issuer.fuzz", audience: "fuzz", now: now)
            }
            let tokens = [
                try mint("RS256", fixtureRSAPrivatePEM, "rsa"), try mint("RS512", fixtureRSAPrivatePEM, nil),
                try mint("ES256", fixtureECPrivatePEM, "ec"), try mint("HS256", nil, nil),
                try mint("HS384", nil, "any"),
            ]
            let parts = Set(tokens.map { String($0[..<$0.lastIndex(of: ".")!]) })
            return Fixture(verifiers: verifiers, keys: keys, validTokens: tokens, signedParts: parts)
        } catch {
            fatalError("fuzz fixture: \(error)")
        }
    }
}

let fixture = Fixture.make()
