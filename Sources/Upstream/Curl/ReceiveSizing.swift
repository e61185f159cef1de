/// How much one transfer reads from the upstream per call (`CURLOPT_BUFFERSIZE`) and may buffer for its consumer.
///
/// Why two sizes: on a download that outruns its client, the upstream socket's receive queue stays nearly full,
/// so every read that frees its own size doubles the advertised window and sends a window update; on loopback
/// that update runs the upstream's next transmission inside our `recvfrom`. With 32 KiB reads that work cost the
/// gateway about twice what nginx's 256 KiB reads cost it (bench/NOTES.md, "Bulk transfers"). A larger read
/// needs a window of several reads behind it, though, and a slow reader holds both for as long as it reads —
/// hundreds of them at once must stay cheap (bench S11). So a download the caller knows to be large reads in
/// bulk pieces while a client-wide budget lasts, and everything else, or a download past the budget, is sized
/// normally.
struct ReceiveSizing: Equatable {
    /// curl's receive buffer: the largest single write callback.
    let receiveBufferBytes: Int
    /// The response stream's capacity.
    let responseBufferBytes: Int
    /// Taken from the bulk budget (0 for a normally sized transfer); given back when the response stream goes.
    let reservedBytes: Int

    /// The sizes of a transfer that is not bulk.
    static func normal(_ configuration: UpstreamConfiguration) -> ReceiveSizing {
        ReceiveSizing(
            receiveBufferBytes: clampReceive(configuration.receiveBufferBytes),
            responseBufferBytes: configuration.responseBufferBytes, reservedBytes: 0)
    }

    /// Bulk sizes when `expectedBodyBytes` reaches the threshold and `budget` has the extra memory they hold,
    /// else `normal`.
    static func choose(
        expectedBodyBytes: Int64?, configuration: UpstreamConfiguration, budget: WindowBudget
    ) -> ReceiveSizing {
        let normal = normal(configuration)
        guard let expected = expectedBodyBytes, expected >= configuration.bulkThresholdBytes else { return normal }
        let receive = clampReceive(configuration.bulkReceiveBufferBytes)
        let capacity = max(configuration.bulkResponseBufferBytes, configuration.responseBufferBytes)
        // What the transfer holds beyond a normal one however slow its reader: curl's buffer and the window floor.
        let extra =
            receive - normal.receiveBufferBytes
            + ResponseBodyStream.minimumWindow(capacity: capacity, maxWrite: receive)
            - ResponseBodyStream.minimumWindow(
                capacity: normal.responseBufferBytes, maxWrite: normal.receiveBufferBytes)
        guard extra > 0 else { return normal }
        guard budget.acquire(extra) else { return normal }
        return ReceiveSizing(receiveBufferBytes: receive, responseBufferBytes: capacity, reservedBytes: extra)
    }

    /// curl accepts 1 KiB…512 KiB; below 16 KiB every read is a system call for little.
    private static func clampReceive(_ bytes: Int) -> Int { min(512 * 1024, max(16 * 1024, bytes)) }
}
