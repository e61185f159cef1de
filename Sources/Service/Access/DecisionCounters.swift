import PortcullisCore
import Rules

/// `portcullis_rules_decisions_total{method,decision}`, pre-resolved per method and outcome so counting a
/// decision is one atomic add. The service counts each request's final rules decision here and nowhere else.
struct DecisionCounters: Sendable {
    private let allowed: [Counter]
    private let denied: [Counter]

    init(registry: MetricsRegistry) {
        let family = registry.counter(
            "portcullis_rules_decisions_total", help: "Access decisions by rules method and outcome.",
            labels: ["method", "decision"])
        allowed = RulesMethod.allCases.map { family.labels($0.rawValue, "allow") }
        denied = RulesMethod.allCases.map { family.labels($0.rawValue, "deny") }
    }

    func count(_ method: RulesMethod, allowed isAllowed: Bool) {
        let index = RulesMethod.allCases.firstIndex(of: method)!
        (isAllowed ? allowed : denied)[index].increment()
    }
}
