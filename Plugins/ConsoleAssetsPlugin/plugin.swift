import Foundation
import PackagePlugin

/// Embeds the web console's files (`Sources/Gateway/Console/Assets/**`) into the Gateway module: one build
/// command runs `ConsoleAssetCompiler` over every file there and writes a Swift source holding them as static
/// strings, so the binary serves the console with no files beside it. The directory is listed on every build,
/// and each file is an input of the command, so adding, editing or removing an asset re-generates the source.
@main
struct ConsoleAssetsPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        // `directory` (not `directoryURL`, which needs tools version 6.1).
        let root = URL(fileURLWithPath: module.directory.string).appending(path: "Console/Assets")
        let files = try Self.files(under: root)
        let output = context.pluginWorkDirectoryURL.appending(path: "ConsoleAssets+Embedded.swift")
        return [.buildCommand(
            displayName: "Embedding \(files.count) console assets",
            executable: try context.tool(named: "ConsoleAssetCompiler").url,
            arguments: [output.path, root.path] + files.map(\.path),
            inputFiles: files, outputFiles: [output])]
    }

    /// Regular files below `root`, in a stable order; hidden files (editor droppings) are skipped.
    static func files(under root: URL) throws -> [URL] {
        guard let walker = FileManager.default.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]) else { return [] }
        var out: [URL] = []
        for case let url as URL in walker where try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
            out.append(url)
        }
        return out.sorted { $0.path < $1.path }
    }
}
