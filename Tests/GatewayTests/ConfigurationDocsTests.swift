import Foundation
import Gateway
import Testing

/// docs/configuration.md must list every option with its env var and default.
@Suite struct ConfigurationDocsTests {
    @Test func docsListEveryOption() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        for option in ConfigurationOption.all {
            let row = try #require(
                text.split(separator: "\n").first {
                    $0.hasPrefix("| `--\(option.flag)" + (option.isSwitch ? "`" : " "))
                },
                "no row for --\(option.flag)")
            #expect(row.contains("`\(option.environment)`"))
            if let value = option.defaultText { #expect(row.contains("`\(value)`"), "--\(option.flag) default") }
        }
    }
}
