public import PortcullisCore
public import Rules

/// Which folder rules `list` judges for a listing, and what the listing may then show: the one definition live
/// listings (both APIs) and the rules playground (`/admin/v1/rules/explain` with a `prefix`) use.
///
/// A listing of prefix `P` is judged as `list` on P's folder — up to its last `/`, without it (`""` for the
/// bucket root). When that denies and `P` does not end in `/` (`photos/cats`, as gsutil lists `gs://b/photos/cats/`
/// first, to learn whether it is an object or a folder), it is judged as `list` on the folder `P` names, and the
/// listing then shows only what lies inside it (names and prefixes starting with `P/`): the caller learns nothing
/// about the parent folder it may not list.
public struct ListScope: Sendable, Equatable {
    /// The folder rules `list` is asked about.
    public let folder: String
    /// When set, only entries whose names start with it are shown (`P/`).
    public let confinedTo: String?

    public init(folder: String, confinedTo: String? = nil) {
        self.folder = folder
        self.confinedTo = confinedTo
    }

    /// By bytes (the house rule for names).
    public static func == (a: ListScope, b: ListScope) -> Bool {
        a.folder.bytesEqual(b.folder) && (a.confinedTo == nil) == (b.confinedTo == nil)
            && (a.confinedTo ?? "").bytesEqual(b.confinedTo ?? "")
    }

    /// The scopes to try for `prefix`, in order.
    public static func candidates(prefix: String) -> [ListScope] {
        let parent = ListScope(folder: StorageService.folder(of: prefix))
        guard !prefix.isEmpty, !prefix.bytesHasSuffix("/") else { return [parent] }
        let inside = prefix + "/"
        return [parent, ListScope(folder: StorageService.folder(of: inside), confinedTo: inside)]
    }

    /// Whether an entry (an object name or a listed prefix) is shown under this scope.
    func shows(_ name: String) -> Bool {
        guard let confinedTo else { return true }
        return name.bytesHasPrefix(confinedTo)
    }
}

extension StorageService {
    /// How the rules decide a listing of `prefix` in `bucket` (`ListScope`): the first candidate scope they
    /// allow, or the first one's denial. `ask` is the rules' `evaluate` or, for the playground, `explain`.
    static func decideList(
        bucket: String, prefix: String, delimiter: String?, auth: Principal?, time: Timestamp,
        _ ask: (RulesRequest) -> RulesDecision
    ) -> (RulesDecision, ListScope) {
        var first: (RulesDecision, ListScope)?
        for scope in ListScope.candidates(prefix: prefix) {
            let decision = ask(
                RulesRequest(
                    method: .list, bucket: bucket, path: scope.folder, auth: auth, time: time, resource: nil,
                    delimiter: delimiter))
            if decision.allowed { return (decision, scope) }
            if first == nil { first = (decision, scope) }
        }
        return first!
    }

    /// Authorizes a listing (as `authorize` does a single decision: admin bypass, one counted decision) and
    /// returns the scope it was allowed under.
    func authorizeList(_ query: ListQuery, principal: Principal?, _ context: RequestContext) throws(ServiceError)
        -> ListScope
    {
        if principal?.isAdmin == true {
            context.record.decision = .admin
            return ListScope(folder: Self.folder(of: query.prefix))
        }
        let (decision, scope) = Self.decideList(
            bucket: query.bucket, prefix: query.prefix, delimiter: query.delimiter, auth: principal, time: .now(),
            judge)
        decisions.count(.list, allowed: decision.allowed)
        context.record.decision = decision.allowed ? .allow : .deny
        guard decision.allowed else { throw .denied(.list) }
        return scope
    }

    /// The playground's view of a live listing of `prefix`: the explanation of the scope that decides it, naming
    /// the folder judged. Admin only.
    public func explainList(
        bucket: String, prefix: String, delimiter: String?, auth: Principal?, time: Timestamp, caller: Caller
    ) throws(ServiceError) -> RulesDecision {
        guard caller.isAdmin else { throw .forbidden("Explaining the rules needs admin credentials.") }
        guard let rules = rules.current else {
            return RulesDecision(allowed: false, explanation: "no rules loaded: everything is denied")
        }
        let (decision, scope) = Self.decideList(
            bucket: bucket, prefix: prefix, delimiter: delimiter, auth: auth, time: time, rules.explain)
        var judged = "list judged on folder '\(scope.folder)'"
        if decision.allowed, let inside = scope.confinedTo { judged += ", showing only names under '\(inside)'" }
        return RulesDecision(allowed: decision.allowed, explanation: judged + ": " + (decision.explanation ?? ""))
    }
}
