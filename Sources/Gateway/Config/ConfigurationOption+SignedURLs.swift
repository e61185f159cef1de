/// `--signed-url-accounts`: whose Google-style (V2/V4) signed URLs the XML-style path honours. Kept in its own
/// file so the option lists other features extend stay small to merge.
extension ConfigurationOption {
    public static let signedURLAccounts = ConfigurationOption(
        flag: "signed-url-accounts", valueName: "EMAIL", environment: "PORTCULLIS_SIGNED_URL_ACCOUNTS",
        defaultText: nil,
        summary:
            "Service accounts (their `client_email`, registered with `--service-accounts`) whose V2/V4 signed URLs are honoured on `/{bucket}/{object}`; the request acts as the account's grant. Repeatable; env is comma-separated. None: signed URLs are refused.",
        repeatable: true)
}
