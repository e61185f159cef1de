/// The limits listed in docs/rules-language.md, enforced at compile time or per request.
enum Limits {
    static let maxSourceBytes = 256 * 1024
    static let maxMatchDepth = 10
    static let maxPathSegments = 100
    static let maxCaptures = 20
    static let maxFunctionParameters = 7
    static let maxLetBindings = 10
    /// Call depth: Firebase's language reference gives 20 in one place and 10 in another; 20 is the larger.
    static let maxCallDepth = 20
    static let maxExpressionsPerRequest = 1000
    /// Deepest expression tree accepted (bounds parser, compiler and evaluator recursion).
    static let maxExpressionDepth = 100
    static let maxCallArguments = 16
    /// Largest string/list/map/bytes a rules expression may build (keeps hostile rules cheap).
    static let maxValueElements = 100_000
    static let maxStringBytes = 1 << 20
    /// Decisions a compiled ruleset memoises (see `DecisionMemo`): ~100 bytes each plus the bucket and path.
    static let memoisedDecisions = 8192
}
