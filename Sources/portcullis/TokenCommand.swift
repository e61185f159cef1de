/// `portcullis token`: mint a development JWT.
enum TokenCommand {
    static let help = ""
    static func run(_ arguments: [String]) -> Never {
        Terminal.fail("token minting is not built yet", code: 1)
    }
}
