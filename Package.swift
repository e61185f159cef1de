// swift-tools-version:6.0
// Portcullis — a Firebase-Storage-compatible gateway. Every target, what it may import and where it builds:
// docs/architecture.md (the import lint in `make lint` holds this file and the code to it).
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

/// `PORTCULLIS_FUZZ_BUILD=1` (scripts/fuzz.sh sets it): Gateway builds without the console-assets plugin, whose
/// tool cannot be linked under `--sanitize=fuzzer` (it would get libFuzzer's `main`), and compiles
/// `Console/FuzzBuild/` instead — an empty catalog — so fuzz targets can depend on Gateway.
let fuzzBuild = Context.environment["PORTCULLIS_FUZZ_BUILD"] == "1"

let package = Package(
    name: "Portcullis",
    // The server is Linux-only; macOS 15 (Synchronization's Mutex) is the minimum for the targets written to build
    // there too: the client SDK, the ops CLI and some of the layers ("Builds on" in docs/architecture.md).
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "portcullis", targets: ["portcullis"]),
        .executable(name: "portcullis-cli", targets: ["portcullis-cli"]),
        .library(name: "PortcullisCore", targets: ["PortcullisCore"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "StorageClient", targets: ["StorageClient"]),
        .library(name: "Crypto", targets: ["Crypto"]),
        .library(name: "Auth", targets: ["Auth"]),
        .library(name: "Rules", targets: ["Rules"]),
        // For the fuzz targets in Fuzz/ (router, multipart reader); not an API for other packages.
        .library(name: "Gateway", targets: ["Gateway"]),
        .library(name: "Service", targets: ["Service"]),
    ],
    targets: [
        // C libraries at the edge: each is imported by exactly one Swift target.
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CJWT", pkgConfig: "libjwt", providers: [.apt(["libjwt-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Not a library: the kernel's epoll and eventfd headers, which Swift's Glibc module leaves out.
        .systemLibrary(name: "CEpoll"),
        // Not a library: CRC-32C with the SSE4.2 instruction (header-only), for Crypto.
        .systemLibrary(name: "CCRC32C"),

        // CEpoll only where epoll exists (EpollSet, the loops' kernel half): elsewhere HTTPServer builds with its
        // Dispatch driver alone.
        .target(
            name: "PortcullisCore",
            dependencies: [.target(name: "CEpoll", condition: .when(platforms: [.linux]))],
            swiftSettings: strict),
        .target(name: "HTTPServer", dependencies: ["PortcullisCore"], swiftSettings: strict),
        .target(name: "Crypto", dependencies: ["PortcullisCore", "COpenSSL", "CCRC32C"], swiftSettings: strict),
        .target(name: "Rules", dependencies: ["PortcullisCore"], swiftSettings: strict),
        // Streaming gunzip (decompressive transcoding): the only importer of CZlib.
        .target(name: "Gzip", dependencies: ["PortcullisCore", "CZlib"], swiftSettings: strict),
        .target(name: "Upstream", dependencies: ["PortcullisCore", "CCurl"], swiftSettings: strict),
        .target(name: "Auth", dependencies: ["PortcullisCore", "Crypto", "Upstream", "CJWT"], swiftSettings: strict),
        .target(
            name: "Storage", dependencies: ["PortcullisCore", "Crypto", "Upstream", "CSQLite"], swiftSettings: strict),
        // Cloud Storage wire shapes shared by the JSON API surface and change events: the object resource, `fields`
        // masks and the JSON object writer. Core only: no service, no HTTP.
        .target(name: "CloudStorageWire", dependencies: ["PortcullisCore"], swiftSettings: strict),
        // Change events (docs/events.md): CloudEvents over HTTP, signing, retry and the delivery engine over an
        // `EventLedger` (the embedded outbox lives in Storage; an in-memory ledger here). No storage, no HTTP server.
        // CloudStorageWire: the event body is the Cloud Storage object resource, rendered here, never by the service.
        .target(
            name: "Events", dependencies: ["PortcullisCore", "Crypto", "Upstream", "CloudStorageWire"],
            swiftSettings: strict),
        // The wire-neutral storage service (docs/architecture.md): authorization, preconditions, capabilities, uploads.
        // It imports no HTTP and no API surface; the surfaces in Gateway are codecs over it.
        // Gzip: decompressive transcoding on the read path is the service's (wire-neutral) business.
        .target(
            name: "Service", dependencies: ["PortcullisCore", "Crypto", "Rules", "Storage", "Gzip"],
            swiftSettings: strict),
        .target(
            name: "Gateway",
            dependencies: [
                "PortcullisCore", "HTTPServer", "Crypto", "Auth", "Rules", "Upstream", "Storage", "Service",
                "Events", "CloudStorageWire",
            ],
            exclude: fuzzBuild ? ["Console/Assets"] : ["Console/Assets", "Console/FuzzBuild"],
            swiftSettings: strict,
            plugins: fuzzBuild ? [] : ["ConsoleAssetsPlugin"]),
        // The web console's HTML, CSS and JavaScript are plain files in Sources/Gateway/Console/Assets; this
        // build-tool plugin (and its tool) embeds them into the Gateway module, so the binary serves them alone.
        .executableTarget(name: "ConsoleAssetCompiler"),
        .plugin(name: "ConsoleAssetsPlugin", capability: .buildTool(), dependencies: ["ConsoleAssetCompiler"]),
        .executableTarget(
            name: "portcullis",
            dependencies: [
                "Gateway", "Service", "PortcullisCore", "HTTPServer", "Crypto", "Auth", "Rules", "Upstream",
                "Storage", "Events",
            ],
            swiftSettings: strict),
        // The client SDK depends on Core only, so apps and ops tools link no server code.
        .target(name: "StorageClient", dependencies: ["PortcullisCore"], swiftSettings: strict),
        .executableTarget(
            name: "portcullis-cli", dependencies: ["StorageClient", "PortcullisCore"], swiftSettings: strict),

        // Test-only helpers shared by several test targets (reading child processes' pipes safely).
        .target(name: "ChildProcessIO", path: "Tests/Shared/ChildProcessIO", swiftSettings: strict),
        .testTarget(name: "PortcullisCoreTests", dependencies: ["PortcullisCore"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(name: "CryptoTests", dependencies: ["ChildProcessIO", "Crypto"]),
        .testTarget(name: "RulesTests", dependencies: ["Rules"], resources: [.copy("Fixtures")]),
        .testTarget(name: "GzipTests", dependencies: ["ChildProcessIO", "Gzip", "PortcullisCore"]),
        .testTarget(name: "AuthTests", dependencies: ["ChildProcessIO", "Auth", "Crypto", "HTTPServer"]),
        .testTarget(name: "UpstreamTests", dependencies: ["ChildProcessIO", "Upstream", "HTTPServer"]),
        .testTarget(name: "StorageTests", dependencies: ["ChildProcessIO", "Storage", "Crypto"]),
        .testTarget(name: "EventsTests", dependencies: ["Events", "PortcullisCore", "HTTPServer", "Upstream"]),
        .testTarget(name: "CloudStorageWireTests", dependencies: ["CloudStorageWire", "PortcullisCore"]),
        // CloudStorageWire: the test sink renders event bodies as the real one does.
        .testTarget(
            name: "ServiceTests",
            dependencies: ["Service", "Storage", "Rules", "Crypto", "CloudStorageWire", "Upstream"]),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "ChildProcessIO", "Gateway", "Service", "HTTPServer", "Storage", "Crypto", "Rules",
                "Events",
            ]),
        .testTarget(name: "StorageClientTests", dependencies: ["ChildProcessIO", "StorageClient", "PortcullisCore"]),
    ],
    swiftLanguageModes: [.v6]
)
