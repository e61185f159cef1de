import Auth
import Gateway
import PortcullisCore
import Upstream

/// Fetches http(s) key documents for `--jwt-keys URL` / `--firebase-project` over the process's upstream client.
enum KeyFetcher {
    static func make(client: UpstreamClient, traces: any TraceRoots) -> any KeyDocumentFetcher {
        UpstreamKeyFetcher(client: client, traces: traces)
    }
}
