// swift-tools-version:6.0
// Fuzz targets and benchmark helpers, kept out of the root package so `swift build` there is unaffected.
// See README.md for the build and run commands.
import PackageDescription

let package = Package(
    name: "PortcullisFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Portcullis", path: "..")
    ],
    targets: [
        // libFuzzer target: build with --sanitize=fuzzer (see README.md).
        .executableTarget(
            name: "FuzzHTTPParser",
            dependencies: [.product(name: "HTTPServer", package: "Portcullis")]),
        // libFuzzer target: arbitrary bytes as bearer tokens through both signature engines (see README.md).
        .executableTarget(
            name: "FuzzTokenDecode",
            dependencies: [
                .product(name: "Auth", package: "Portcullis"),
                .product(name: "Crypto", package: "Portcullis"),
                .product(name: "PortcullisCore", package: "Portcullis"),
            ]),
        // libFuzzer target: multipart/related bodies split at PRNG-chosen chunk edges (see README.md).
        .executableTarget(
            name: "FuzzMultipartReader",
            dependencies: [
                .product(name: "Gateway", package: "Portcullis"),
                .product(name: "PortcullisCore", package: "Portcullis"),
            ]),
        // libFuzzer target: v0 routing and query parsing of arbitrary method/target/headers (see README.md).
        // What the router targets share: their input as a request, a reference decoder, the failure invariants.
        .target(
            name: "FuzzReference",
            dependencies: [
                .product(name: "HTTPServer", package: "Portcullis"), .product(name: "Service", package: "Portcullis"),
            ]),
        .executableTarget(
            name: "FuzzV0Router",
            dependencies: [
                "FuzzReference",
                .product(name: "Gateway", package: "Portcullis"),
                .product(name: "HTTPServer", package: "Portcullis"),
                .product(name: "PortcullisCore", package: "Portcullis"),
                .product(name: "Service", package: "Portcullis"),
            ]),
        // libFuzzer target: matchGlob patterns and names against an independent reference matcher (see README.md).
        .executableTarget(
            name: "FuzzNameGlob",
            dependencies: [.product(name: "PortcullisCore", package: "Portcullis")]),
        // libFuzzer target: JSON API routing and query parsing of arbitrary method/target/headers (see README.md).
        // It compiles the router and the Gateway files it reads through symlinks instead of depending on
        // Gateway, whose build-tool plugin cannot be built under --sanitize=fuzzer (README.md).
        .executableTarget(
            name: "FuzzJSONRouter",
            dependencies: [
                "FuzzReference",
                .product(name: "HTTPServer", package: "Portcullis"),
                .product(name: "PortcullisCore", package: "Portcullis"),
                .product(name: "Service", package: "Portcullis"),
            ]),
        // libFuzzer target: the S3 backend's XML reader on arbitrary documents (see README.md). Like
        // FuzzJSONRouter it compiles the reader's files through symlinks: Storage is not a library product.
        .executableTarget(
            name: "FuzzXMLReader", dependencies: [.product(name: "PortcullisCore", package: "Portcullis")]),
        // libFuzzer target: the JSON parser and the pull reader on arbitrary documents, against each other (see
        // README.md).
        .executableTarget(
            name: "FuzzJSON", dependencies: [.product(name: "PortcullisCore", package: "Portcullis")]),
        // In-process JWT verification cost (cold RS256/ES256/HS256, cached): `swift run -c release auth-bench`.
        .executableTarget(
            name: "auth-bench",
            dependencies: [
                .product(name: "Auth", package: "Portcullis"),
                .product(name: "Crypto", package: "Portcullis"),
                .product(name: "PortcullisCore", package: "Portcullis"),
            ]),
        // libFuzzer target for the rules compiler (and evaluator on whatever compiles); see README.md.
        .executableTarget(
            name: "FuzzRulesParser",
            dependencies: [
                .product(name: "Rules", package: "Portcullis"),
                .product(name: "PortcullisCore", package: "Portcullis"),
            ]),
        // Rules evaluation cost (µs per decision) for `make bench`; see README.md.
        .executableTarget(
            name: "rules-bench",
            dependencies: [
                .product(name: "Rules", package: "Portcullis"),
                .product(name: "PortcullisCore", package: "Portcullis"),
            ]),
        // S9 of `make bench`: cold/cached JWT verification and rules decision cost (µs/op); see README.md.
        .executableTarget(
            name: "portcullis-microbench",
            dependencies: [
                .product(name: "Auth", package: "Portcullis"),
                .product(name: "Crypto", package: "Portcullis"),
                .product(name: "PortcullisCore", package: "Portcullis"),
                .product(name: "Rules", package: "Portcullis"),
            ]),
        // A canned-response server for wrk comparisons against nginx.
        .executableTarget(
            name: "http-bench-server",
            dependencies: [
                .product(name: "HTTPServer", package: "Portcullis"),
                .product(name: "PortcullisCore", package: "Portcullis"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
