// swift-tools-version:6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

/// The libFuzzer targets for the input parsers, in Fuzz/<name>/. `Scripts/fuzz.sh` builds them
/// for libFuzzer (defining FUZZING, with the fuzzer and address sanitizers and testable
/// imports: they call the parsers' internal entry points). Any other build makes programs that
/// replay inputs given as arguments (Fuzz/Replay). Executables of this package and no product,
/// so no other package sees them or the daemon's module.
let fuzzTargets: [Target] = ["BinaryDecoder", "HTTP2Request", "ProviderToken", "ControlAPI", "PlaintextSession", "DeviceModel", "HTTP2Connection"].map { name in
    .executableTarget(
        name: "Fuzz\(name)",
        dependencies: ["FakeAPNs", "FuzzReplay"] + (["ControlAPI", "DeviceModel"].contains(name) ? ["FakeAPNsDaemon"] : []),
        path: "Fuzz/\(name)",
        exclude: ["BinaryDecoder", "PlaintextSession", "HTTP2Connection"].contains(name) ? [] : ["dictionary.txt"],
        swiftSettings: strictSettings
    )
} + [
    .target(name: "FuzzReplay", path: "Fuzz/Replay", swiftSettings: strictSettings),
]

let package = Package(
    name: "FakeAPNs",
    products: [
        .library(name: "FakeAPNs", targets: ["FakeAPNs"]),
        .library(name: "FakeAPNsTesting", targets: ["FakeAPNsTesting"]),
        .executable(name: "fake-apns", targets: ["fake-apns"]),
    ],
    targets: [
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CNGHTTP2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // Node's http_parser (Debian's libhttp-parser-dev ships no pkg-config file): it parses
        // the plaintext listener's HTTP/1.1 requests. Swift calls it directly; no shim needed.
        .systemLibrary(
            name: "CHTTPParser",
            providers: [.apt(["libhttp-parser-dev"])]
        ),
        .target(
            name: "CMicroHTTPDShims",
            dependencies: ["CMicroHTTPD"]
        ),
        // One shim per C library, for what Swift cannot call directly (macros, GNU extensions,
        // API differences between library versions).
        .target(
            name: "COpenSSLShims",
            dependencies: ["COpenSSL"]
        ),
        .target(
            name: "CNGHTTP2Shims",
            dependencies: ["CNGHTTP2"]
        ),
        .target(name: "CPOSIXShims"),
        .target(
            name: "FakeAPNs",
            dependencies: ["COpenSSL", "COpenSSLShims", "CNGHTTP2", "CNGHTTP2Shims", "CHTTPParser", "CPOSIXShims"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "FakeAPNsTesting",
            dependencies: ["FakeAPNs"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "FakeAPNsDaemon",
            dependencies: ["FakeAPNs", "CMicroHTTPD", "CMicroHTTPDShims"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "fake-apns",
            dependencies: ["FakeAPNsDaemon"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "fake-apns-bench",
            dependencies: ["FakeAPNs", "COpenSSL", "CPOSIXShims"],
            path: "Sources/fake-apns-bench",
            swiftSettings: strictSettings
        ),
        // What both test targets share: fixtures, processes, sockets. A target, not a product.
        .target(
            name: "FakeAPNsTestSupport",
            dependencies: ["FakeAPNs"],
            path: "Tests/FakeAPNsTestSupport",
            swiftSettings: strictSettings
        ),
        // The daemon's tests also run the built `fake-apns`, so they depend on it.
        .testTarget(
            name: "FakeAPNsDaemonTests",
            dependencies: ["FakeAPNsDaemon", "FakeAPNs", "FakeAPNsTestSupport", "fake-apns"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FakeAPNsTests",
            // FuzzDeviceModel: FuzzRegressionTests replays its seeds through the built program
            // (as FuzzHTTP2Connection's, which `swift build --build-tests` builds too; a second
            // dependency would link two `LLVMFuzzerTestOneInput`s into the tests).
            dependencies: ["FakeAPNs", "FakeAPNsTesting", "FakeAPNsTestSupport", "FuzzDeviceModel"],
            swiftSettings: strictSettings
        ),
    ] + fuzzTargets,
    swiftLanguageModes: [.v6]
)
