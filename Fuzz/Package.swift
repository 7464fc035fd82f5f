// swift-tools-version:6.0
// The libFuzzer targets for FakeAPNs's input parsers, a package of their own (as
// swift-nio-http2's FuzzTesting) so the main package builds no fuzzing code. Scripts/fuzz.sh
// builds them with the fuzzer and address sanitizers and with testable imports, which the
// targets need: they call the parsers' internal entry points (`@testable import`).
import PackageDescription

let targets = ["BinaryDecoder", "HTTP2Request", "ProviderToken", "ControlAPI", "PlaintextSession"]

let package = Package(
    name: "FakeAPNsFuzz",
    products: targets.map { .executable(name: $0, targets: ["Fuzz\($0)"]) },
    dependencies: [
        .package(name: "FakeAPNs", path: ".."),
    ],
    targets: targets.map { name in
        .executableTarget(
            name: "Fuzz\(name)",
            dependencies: [
                .product(name: "FakeAPNs", package: "FakeAPNs"),
                // The control API's request types live in the daemon.
                name == "ControlAPI" ? .product(name: "_FakeAPNsDaemonForFuzzing", package: "FakeAPNs") : nil,
            ].compactMap { $0 },
            path: name,
            exclude: ["BinaryDecoder", "PlaintextSession"].contains(name) ? [] : ["dictionary.txt"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    },
    swiftLanguageModes: [.v6]
)
