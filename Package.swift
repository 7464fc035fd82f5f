// swift-tools-version:6.0
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
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
            dependencies: ["COpenSSL", "COpenSSLShims", "CNGHTTP2", "CNGHTTP2Shims", "CPOSIXShims"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "FakeAPNsTesting",
            dependencies: ["FakeAPNs"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "FakeAPNsDaemon",
            dependencies: ["FakeAPNs", "CMicroHTTPDShims"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "fake-apns",
            dependencies: ["FakeAPNsDaemon"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "fake-apns-bench",
            dependencies: ["FakeAPNs", "COpenSSL"],
            path: "Sources/fake-apns-bench",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FakeAPNsDaemonTests",
            dependencies: ["FakeAPNsDaemon", "FakeAPNs"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "FakeAPNsTests",
            dependencies: ["FakeAPNs", "FakeAPNsTesting"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
