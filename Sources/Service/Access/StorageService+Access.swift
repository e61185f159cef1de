import PortcullisCore
public import Rules

/// Authorization: the first thing every operation does, before anything about the object is revealed.
extension StorageService {
    /// Asks the rules unless the caller is an admin. Runs BEFORE any existence or precondition
    /// check is revealed, so a denied read of a missing object is 403, never 404, and a denied write never
    /// learns whether its precondition held. Records and counts the decision.
    func authorize(
        _ method: RulesMethod, _ object: (bucket: String, path: String), principal: Principal?,
        resource: ObjectMetadata?, requestResource: ObjectMetadata? = nil, delimiter: String? = nil,
        _ context: RequestContext
    ) throws(ServiceError) {
        if principal?.isAdmin == true {
            context.record.decision = .admin
            return
        }
        var span = context.trace?.startSpan("rules.decide")
        let decision = judge(
            RulesRequest(
                method: method, bucket: object.bucket, path: object.path, auth: principal,
                time: .now(), resource: resource, requestResource: requestResource,
                delimiter: delimiter))
        decisions.count(method, allowed: decision.allowed)
        context.record.decision = decision.allowed ? .allow : .deny
        if span != nil {
            span?.setAttribute("portcullis.rules.method", method.rawValue)
            span?.setAttribute("portcullis.rules.decision", decision.allowed ? "allow" : "deny")
            span?.end()
        }
        guard decision.allowed else { throw .denied(method) }
    }

    /// The rules' verdict, uncounted (the early upload check tries several proposals and counts only the one
    /// that ends the request). With no rules loaded everything is denied.
    func judge(_ request: RulesRequest) -> RulesDecision {
        rules.current?.evaluate(request)
            ?? RulesDecision(allowed: false, explanation: "no rules loaded: everything is denied")
    }

    /// How a read of `object` (whose current generation is `current`, nil when absent) is let through: a
    /// signed URL for it, a matching download token, or the rules' `get` — judged before existence is revealed.
    func authorizeRead(_ object: ObjectPath, caller: Caller, current: ObjectMetadata?, _ context: RequestContext)
        throws(ServiceError) -> ReadGrant
    {
        if let signed = try openSignature(caller, .read, object, context) {
            // Issued for one generation: anything else under the name is not what the URL shares.
            guard let current, current.generation == signed.generation else {
                throw .noSuchObject(bucket: object.bucket, name: object.name)
            }
            return .signedURL
        }
        if let token = caller.downloadToken, let current, current.downloadTokens.containsBytes(token) {
            context.record.decision = .token
            return .downloadToken
        }
        try authorize(.get, (object.bucket, object.name), principal: caller.principal, resource: current, context)
        return .rules
    }

    /// The signed URL the caller presented granting `method` on `object` (nil: none presented). A present but
    /// invalid one is an error, never a fallback to the rules: 400 when malformed, 403 otherwise. The caller
    /// checks the grant's generation against the object it finds.
    func openSignature(_ caller: Caller, _ method: SignedMethod, _ object: ObjectPath, _ context: RequestContext)
        throws(ServiceError) -> SignedURLGrant?
    {
        guard let token = caller.signature else { return nil }
        let grant: SignedURLGrant
        do {
            grant = try SignedURLGrant.open(sealer, token: token, method: method, object: object, now: .now())
        } catch .malformed {
            throw .badRequest("The signature parameter is malformed.")
        } catch .expired {
            throw .forbidden("The signed URL has expired.")
        } catch {
            throw .forbidden("The signed URL is not valid for this request.")
        }
        context.record.decision = .token
        return grant
    }

    /// Explains how the rules in force decide `request` (the rules playground): which `match` and condition
    /// granted, or why nothing did. Admin only.
    public func explain(_ request: RulesRequest, caller: Caller) throws(ServiceError) -> RulesDecision {
        guard caller.isAdmin else { throw .forbidden("Explaining the rules needs admin credentials.") }
        return rules.current?.explain(request)
            ?? RulesDecision(allowed: false, explanation: "no rules loaded: everything is denied")
    }
}

/// What let a read through; decides what the caller may learn beyond the bytes.
enum ReadGrant: Equatable {
    case rules
    case downloadToken
    /// A signed URL: no download token is minted, revealed or returned under it.
    case signedURL
}
