/// `--tls-cert FILE` and `--tls-key FILE`: TLS on the listeners (both or neither). Kept in their own file so
/// the option lists that other features extend stay small to merge.
extension ConfigurationOption {
    public static let tlsCert = ConfigurationOption(
        flag: "tls-cert", valueName: "FILE", environment: "PORTCULLIS_TLS_CERT", defaultText: nil,
        summary:
            "PEM certificate chain (leaf first) to serve HTTPS on `--listen` and `--console-listen` (TLS 1.2 minimum, ALPN http/1.1); needs `--tls-key`. Re-read on SIGHUP; a pair that does not load keeps the old one."
    )
    public static let tlsKey = ConfigurationOption(
        flag: "tls-key", valueName: "FILE", environment: "PORTCULLIS_TLS_KEY", defaultText: nil,
        summary: "PEM private key of `--tls-cert` (unencrypted PKCS#8 or traditional, RSA or EC); needs `--tls-cert`."
    )
}
