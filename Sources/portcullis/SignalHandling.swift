import Dispatch
import PortcullisCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Signals for `serve`, delivered through `DispatchSource` on one serial queue (never a C signal handler):
/// SIGTERM/SIGINT start a graceful drain and a second one exits at once (status 128+signal); SIGHUP reloads the
/// rules, the service accounts and the TLS certificate; SIGPIPE is ignored.
final class SignalHandling: Sendable {
    private let queue = DispatchQueue(label: "portcullis.signals")
    private let logger: Logger
    private let state = Mutex<State>(State())

    /// Written once by `install()` before any signal can arrive; kept only so the sources stay alive.
    private nonisolated(unsafe) var sources: [any DispatchSourceSignal] = []

    private struct State {
        var shuttingDown = false
        var onReload: (@Sendable () -> Void)?
        var onShutdown: (@Sendable () -> Void)?
    }

    init(logger: Logger) { self.logger = logger }

    var onReload: (@Sendable () -> Void)? {
        get { state.withLock { $0.onReload } }
        set { state.withLock { $0.onReload = newValue } }
    }

    var onShutdown: (@Sendable () -> Void)? {
        get { state.withLock { $0.onShutdown } }
        set { state.withLock { $0.onShutdown = newValue } }
    }

    /// Replaces the default dispositions (so the kernel does not kill the process) and starts the sources.
    func install() {
        _ = signal(SIGPIPE, SIG_IGN)
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT, SIGHUP] {
            _ = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in self.handle(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    private func handle(_ number: Int32) {
        if number == SIGHUP {
            logger.info("SIGHUP: reloading the rules, the service accounts and the TLS certificate")
            onReload?()
            return
        }
        let (first, action) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            defer { state.shuttingDown = true }
            return (!state.shuttingDown, state.onShutdown)
        }
        let name = number == SIGTERM ? "SIGTERM" : "SIGINT"
        guard first else {
            logger.warning("\(name) again: exiting now")
            exit(128 + number)
        }
        logger.info("\(name): shutting down gracefully")
        action?()
    }

    /// Suspends the caller for the life of the process (exit happens from a signal path).
    static func waitForever() async -> Never {
        while true {
            try? await Task.sleep(for: .seconds(3600))
        }
    }
}
