/// The release version, printed by `portcullis --version` and `portcullis-cli --version` and logged at start.
/// One constant for both executables, so they cannot disagree.
public enum PortcullisVersion {
    public static let current = "0.1.0"
}
