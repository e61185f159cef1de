/// `--service-accounts FILE`: the service accounts Portcullis issued (`portcullis service-account create`) and
/// may authenticate. Kept in its own file so the option lists other features extend stay small to merge.
extension ConfigurationOption {
    public static let serviceAccounts = ConfigurationOption(
        flag: "service-accounts", valueName: "FILE", environment: "PORTCULLIS_SERVICE_ACCOUNTS_FILE",
        defaultText: nil,
        summary:
            "Accounts file written by `portcullis service-account create`: their key files get access tokens from `POST /oauth2/v4/token` and act as admin or as the configured uid and claims. Reloaded on SIGHUP (a bad new file keeps the old accounts); removing an account revokes its tokens."
    )
}
