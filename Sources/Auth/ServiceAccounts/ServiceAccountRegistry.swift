public import PortcullisCore
import Synchronization

/// The service accounts currently registered: read at start from `--service-accounts`, replaced whole on reload
/// (SIGHUP). Lookups are by the exact bytes of the email or of the key id. Thread-safe.
public final class ServiceAccountRegistry: Sendable {
    private struct Snapshot: Sendable {
        var byEmail: [ExactString: ServiceAccount] = [:]
        var byKeyID: [ExactString: ServiceAccount] = [:]
    }

    private let state = Mutex(Snapshot())

    public init(_ accounts: [ServiceAccount] = []) { replace(with: accounts) }

    /// Installs a new list; accounts missing from it stop working at once (their access tokens included).
    public func replace(with accounts: [ServiceAccount]) {
        var next = Snapshot()
        for account in accounts {
            next.byEmail[ExactString(account.email)] = account
            next.byKeyID[ExactString(account.keyID)] = account
        }
        state.withLock { $0 = next }
    }

    public var count: Int { state.withLock { $0.byEmail.count } }

    public func account(email: String) -> ServiceAccount? { state.withLock { $0.byEmail[ExactString(email)] } }

    public func account(keyID: String) -> ServiceAccount? { state.withLock { $0.byKeyID[ExactString(keyID)] } }
}
