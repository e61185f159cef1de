import Service

/// What the router targets require of two routings of one request that both failed: the same error, a status a
/// router may answer (400, 404, 405), a message, and `Allow` with every 405.
public func checkRoutingFailures(_ a: ServiceError, _ b: ServiceError) {
    precondition(a == b, "routing is not deterministic")
    // 501: a Cloud Storage JSON API feature the gateway routes only to say it is not served.
    precondition([400, 404, 405, 501].contains(a.status), "unexpected status \(a.status)")
    precondition(!a.message.isEmpty, "error without a message")
    if a.status == 405 {
        precondition(!(a.details.allowedMethods ?? []).isEmpty, "405 without Allow")
    }
}
