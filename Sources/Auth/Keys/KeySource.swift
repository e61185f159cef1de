public import PortcullisCore
import Synchronization

/// Timing and size knobs of a `KeySource`; the defaults suit production, tests shorten them.
public struct KeySourceOptions: Sendable {
    /// Refresh period when a URL response has no `Cache-Control: max-age`.
    public var defaultMaxAgeSeconds: Double = 3600
    /// Refreshes happen at 90 % of max-age, clamped to this range.
    public var minimumRefreshSeconds: Double = 30
    public var maximumRefreshSeconds: Double = 86_400
    /// An unknown `kid` triggers a refetch at most this often (measured from the previous fetch of any kind).
    public var unknownKeyRefetchSeconds: Double = 60
    /// First retry delay after a failed refresh; doubles up to `maximumRetrySeconds`. The last good set stays.
    public var retrySeconds: Double = 5
    public var maximumRetrySeconds: Double = 300
    /// How often a key file's modification time is checked for changes.
    public var fileCheckSeconds: Double = 60
    /// Largest key document accepted.
    public var maxDocumentBytes: Int = 1 << 20

    public init() {}
}

/// Where verification keys come from (`--jwt-keys`): a file or an http(s) URL, holding PEM, a JWKS or
/// Google's x509 map (see `KeySet`).
///
/// Keeps the current `KeySet`; `start()` loads it and runs a background refresh (URL: per `Cache-Control`,
/// before expiry; file: when its mtime/size change). A failed refresh keeps the last good set and retries with
/// backoff. Fetches are single-flight: concurrent triggers share one fetch. Thread-safe.
public final class KeySource: Sendable {
    public enum Location: Sendable, Equatable {
        case file(path: String)
        case url(String)
    }

    public let location: Location
    private let fetcher: (any KeyDocumentFetcher)?
    private let logger: Logger
    private let options: KeySourceOptions
    /// A `fixed(_:)` source: never fetched or refreshed.
    private let isStatic: Bool

    private struct State {
        var keys: KeySet?
        var lastFetchNanos: UInt64?
        var lastStamp: KeyFileReader.Stamp?
        var lastMaxAge: Double?
        var inflight: Task<Result<KeySet, AuthError>, Never>?
        var refreshTask: Task<Void, Never>?
        var listeners: [@Sendable (KeySet) -> Void] = []
    }

    private let state = Mutex(State())

    public convenience init(
        location: Location, fetcher: (any KeyDocumentFetcher)?, logger: Logger,
        options: KeySourceOptions = .init()
    ) {
        self.init(location: location, fetcher: fetcher, logger: logger, options: options, isStatic: false)
    }

    private init(
        location: Location, fetcher: (any KeyDocumentFetcher)?, logger: Logger, options: KeySourceOptions,
        isStatic: Bool
    ) {
        self.location = location
        self.fetcher = fetcher
        self.logger = logger
        self.options = options
        self.isStatic = isStatic
    }

    /// `spec` starting with `http://` or `https://` is a URL, anything else a file path.
    public static func from(
        spec: String, fetcher: any KeyDocumentFetcher, logger: Logger,
        options: KeySourceOptions = .init()
    ) -> KeySource {
        let lower = spec.lowercased()
        let location: Location =
            lower.hasPrefix("http://") || lower.hasPrefix("https://") ? .url(spec) : .file(path: spec)
        return KeySource(location: location, fetcher: fetcher, logger: logger, options: options)
    }

    /// A key source that never changes (tests, embedded use).
    public static func fixed(_ keys: KeySet) -> KeySource {
        let source = KeySource(
            location: .file(path: "<fixed>"), fetcher: nil, logger: .disabled, options: .init(),
            isStatic: true)
        source.state.withLock { $0.keys = keys }
        return source
    }

    deinit { state.withLock { $0.refreshTask?.cancel() } }

    /// The current key set; nil until the first successful load.
    public var current: KeySet? { state.withLock { $0.keys } }

    private var description: String {
        switch location {
        case .file(let path): path
        case .url(let url): url
        }
    }

    /// Loads the initial key set (a failure is logged; verification then fails with `noKeys` until a refresh
    /// succeeds) and starts the background refresh. Idempotent.
    public func start() async {
        let alreadyStarted = state.withLock { $0.refreshTask != nil }
        guard !alreadyStarted, canFetch else { return }
        let loaded = await refresh()
        // The loop holds the source weakly between steps so dropping the source ends it (deinit cancels).
        // After a failed initial load, retry soon rather than after a whole refresh period.
        let initialDelay: Double, initialRetry: Double
        if case .success = loaded {
            (initialDelay, initialRetry) = (nextDelay(), options.retrySeconds)
        } else {
            (initialDelay, initialRetry) = (
                options.retrySeconds, min(options.retrySeconds * 2, options.maximumRetrySeconds)
            )
        }
        let task = Task.detached { [weak self] in
            var delay = initialDelay, retry = initialRetry
            while !Task.isCancelled {
                do { try await Task.sleep(for: .milliseconds(Int64(delay * 1000))) } catch { return }
                guard let source = self else { return }
                (delay, retry) = await source.refreshStep(retry: retry)
            }
        }
        state.withLock { s in
            if s.refreshTask == nil { s.refreshTask = task } else { task.cancel() }
        }
    }

    /// Stops the background refresh.
    public func stop() {
        state.withLock { s in
            s.refreshTask?.cancel()
            s.refreshTask = nil
        }
    }

    /// Fetches now (joining a fetch already in flight) and installs the result if it parses.
    @discardableResult
    public func refresh() async -> Result<KeySet, AuthError> {
        let task: Task<Result<KeySet, AuthError>, Never> = state.withLock { s in
            if let inflight = s.inflight { return inflight }
            let task = Task { await self.fetchAndInstall() }
            s.inflight = task
            return task
        }
        let result = await task.value
        state.withLock { s in if s.inflight == task { s.inflight = nil } }
        return result
    }

    /// Called when a token names an unknown `kid`: refetches unless the last fetch was less than
    /// `unknownKeyRefetchSeconds` ago. Returns the new key set when a fetch happened and succeeded.
    func refetchForUnknownKey() async -> KeySet? {
        guard canFetch, state.withLock({ $0.refreshTask != nil || $0.keys != nil }) else { return nil }
        let now = MonotonicClock.nanoseconds()
        let allowed = state.withLock { s -> Bool in
            if s.inflight != nil { return true }
            if let last = s.lastFetchNanos, Double(now &- last) / 1e9 < options.unknownKeyRefetchSeconds {
                return false
            }
            return true
        }
        guard allowed else { return nil }
        logger.info("jwt keys: refetching for an unknown kid", [("source", .string(description))])
        guard case .success(let keys) = await refresh() else { return nil }
        return keys
    }

    /// `listener` is called with every newly installed key set (cache invalidation).
    func onUpdate(_ listener: @escaping @Sendable (KeySet) -> Void) {
        state.withLock { $0.listeners.append(listener) }
    }

    private var canFetch: Bool {
        guard !isStatic else { return false }
        if case .file = location { return true }
        return fetcher != nil
    }

    private func fetchAndInstall() async -> Result<KeySet, AuthError> {
        state.withLock { $0.lastFetchNanos = MonotonicClock.nanoseconds() }
        let document: [UInt8]
        switch location {
        case .file(let path):
            switch await KeyFileReader.read(path, limit: options.maxDocumentBytes) {
            case .success(let (bytes, stamp)):
                document = bytes
                state.withLock { $0.lastStamp = stamp }
            case .failure(let error):
                logger.warning(
                    "jwt keys: load failed, keeping the previous keys",
                    [("source", .string(description)), ("error", .string(error.message))])
                return .failure(error)
            }
        case .url(let url):
            guard let fetcher else { return .failure(AuthError(.noKeys, "no fetcher for \(url)")) }
            do {
                let (body, maxAge) = try await fetcher.fetch(url)
                guard body.count <= options.maxDocumentBytes else {
                    throw AuthError(.noKeys, "key document larger than \(options.maxDocumentBytes) bytes")
                }
                document = body
                state.withLock { $0.lastMaxAge = maxAge.map(Double.init) }
            } catch {
                let failure = error as? AuthError ?? AuthError(.noKeys, "fetching keys failed: \(error)")
                logger.warning(
                    "jwt keys: fetch failed, keeping the previous keys",
                    [("source", .string(description)), ("error", .string(failure.message))])
                return .failure(failure)
            }
        }
        let keys: KeySet
        do { keys = try KeySet.parse(document: document) } catch {
            logger.warning(
                "jwt keys: document rejected, keeping the previous keys",
                [("source", .string(description)), ("error", .string(error.message))])
            return .failure(error)
        }
        let (previous, listeners) = state.withLock { s in
            let previous = s.keys
            s.keys = keys
            return (previous, s.listeners)
        }
        let old = previous?.fingerprints ?? []
        let added = keys.fingerprints.subtracting(old).count, removed = old.subtracting(keys.fingerprints).count
        if previous == nil || added > 0 || removed > 0 {
            logger.info(
                "jwt keys loaded",
                [
                    ("source", .string(description)), ("keys", .int(Int64(keys.keys.count))),
                    ("added", .int(Int64(added))), ("removed", .int(Int64(removed))),
                    ("skipped", .int(Int64(keys.skipped.count))),
                ])
        }
        for listener in listeners { listener(keys) }
        return .success(keys)
    }

    /// Seconds until the next refresh after a success.
    private func nextDelay() -> Double {
        switch location {
        case .file: return max(0.01, options.fileCheckSeconds)
        case .url:
            let maxAge = state.withLock { $0.lastMaxAge } ?? options.defaultMaxAgeSeconds
            return min(max(maxAge * 0.9, options.minimumRefreshSeconds), options.maximumRefreshSeconds)
        }
    }

    /// One background refresh; returns the delay before the next one and the next retry delay.
    private func refreshStep(retry: Double) async -> (delay: Double, retry: Double) {
        if case .file(let path) = location {
            let stamp = await KeyFileReader.stamp(path)
            if stamp != nil, stamp == state.withLock({ $0.lastStamp }) { return (nextDelay(), options.retrySeconds) }
        }
        switch await refresh() {
        case .success: return (nextDelay(), options.retrySeconds)
        case .failure: return (retry, min(retry * 2, options.maximumRetrySeconds))
        }
    }
}
