public import PortcullisCore

/// Who is asking, and what they presented besides their credentials.
///
/// `principal` comes from the pipeline's authentication (nil = anonymous; an admin principal bypasses rules).
/// The capabilities are the raw strings from the request; the service opens and checks them. A present but
/// invalid capability is an error, never a fallback to the rules.
public struct Caller: Sendable {
    public var principal: Principal?
    /// A download token (`?token=` on v0): grants reads of the object holding it.
    public var downloadToken: String?
    /// A sealed signed-URL grant (`?signature=`): one method on one object until it expires.
    public var signature: String?

    public init(principal: Principal? = nil, downloadToken: String? = nil, signature: String? = nil) {
        self.principal = principal
        self.downloadToken = downloadToken.flatMap { $0.isEmpty ? nil : $0 }
        self.signature = signature.flatMap { $0.isEmpty ? nil : $0 }
    }

    public var isAdmin: Bool { principal?.isAdmin == true }
}
