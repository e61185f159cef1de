import ChildProcessIO
import Foundation

/// Runs the built `portcullis` executable (the `swift build` product next to the test bundle).
enum CLI {
    struct Outcome {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// `.build/<triple>/debug/portcullis`, built on demand if the test run did not build it.
    static let binary: String = {
        let exe =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
        if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
        let candidate = directory.appendingPathComponent("portcullis").path
        if !FileManager.default.isExecutableFile(atPath: candidate) {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let build = Process()
            build.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            build.arguments = ["swift", "build", "--package-path", root.path, "--product", "portcullis"]
            try? build.run()
            build.waitUntilExit()
        }
        return candidate
    }()

    /// Runs to completion; the environment is minimal unless given (no PORTCULLIS_* leaks from the host).
    static func run(_ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil) throws
        -> Outcome
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdoutData = out.fileHandleForReading.readToEndRetryingInterrupts()
        let stderrData = err.fileHandleForReading.readToEndRetryingInterrupts()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self))
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("portcullis-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
