import XCTest
@testable import FakeAPNsDaemon

/// The daemon's options: command line, environment, and the checks between them.
final class OptionsTests: XCTestCase {
    func testEveryOptionIsAlsoAnEnvironmentVariableAndTheCommandLineWins() throws {
        let options = try Options.parse(
            ["--gateway-port", "7000"],
            environment: ["FAKE_APNS_GATEWAY_PORT": "6000", "FAKE_APNS_HTTP2_PORT": "6001", "FAKE_APNS_STRICT": "1",
                          "FAKE_APNS_LOG": "text", "FAKE_APNS_RETENTION": "50"])
        XCTAssertEqual(options.gatewayPort, 7000)
        XCTAssertEqual(options.http2Port, 6001)
        XCTAssertTrue(options.strict)
        XCTAssertEqual(options.log, .text)
        XCTAssertEqual(options.retention, 50)
    }

    func testHelpNamesEveryEnvironmentVariable() {
        for name in ["FAKE_APNS_HOST", "FAKE_APNS_GATEWAY_PORT", "FAKE_APNS_WEB_PORT", "FAKE_APNS_JWT_KEY", "FAKE_APNS_LOG_FILE"] {
            XCTAssertTrue(Options.help.contains(name), name)
        }
    }

    func testBadValuesNameTheirOption() {
        for (arguments, environment, named) in [
            (["--web-port", "x"], [String: String](), "--web-port"),
            ([], ["FAKE_APNS_GATEWAY_PORT": "99999"], "FAKE_APNS_GATEWAY_PORT"),
            (["--log", "xml"], [:], "--log"),
            (["--bogus"], [:], "--bogus"),
            (["--web-host", "0.0.0.0"], [:], "--web-public"),
        ] {
            XCTAssertThrowsError(try Options.parse(arguments, environment: environment)) { error in
                XCTAssertTrue("\(error)".contains(named), "\(error)")
            }
        }
    }

    func testConnectionLimitsComeFromTheCommandLineOrTheEnvironment() throws {
        let defaults = try Options.parse([])
        XCTAssertEqual(defaults.maximumConnectionsPerListener, 1000)
        XCTAssertEqual(defaults.maximumConnections, 2000)
        let options = try Options.parse(
            ["--max-connections", "20"], environment: ["FAKE_APNS_MAX_TOTAL_CONNECTIONS": "30"])
        XCTAssertEqual(options.maximumConnectionsPerListener, 20)
        XCTAssertEqual(options.maximumConnections, 30)
        XCTAssertThrowsError(try Options.parse(["--max-connections", "0"])) { error in
            XCTAssertEqual("\(error)", "--max-connections takes a positive count, not '0'")
        }
        XCTAssertTrue(Options.help.contains("FAKE_APNS_MAX_TOTAL_CONNECTIONS"))
    }

    func testTheControlAPIConnectionLimitIsACountFromTheCommandLineOrTheEnvironment() throws {
        XCTAssertEqual(try Options.parse([]).webMaxConnections, 1024)
        XCTAssertEqual(try Options.parse(["--web-max-connections", "2000"]).webMaxConnections, 2000)
        XCTAssertEqual(
            try Options.parse([], environment: ["FAKE_APNS_WEB_MAX_CONNECTIONS": "8"]).webMaxConnections, 8)
        for bad in ["0", "-1", "65537", "many"] {
            XCTAssertThrowsError(try Options.parse(["--web-max-connections", bad])) { error in
                XCTAssertTrue("\(error)".contains("--web-max-connections"), "\(error)")
            }
        }
    }

    func testPublicControlAPINeedsItsSwitch() throws {
        let options = try Options.parse(["--web-host", "0.0.0.0", "--web-public"])
        XCTAssertEqual(options.webHost, "0.0.0.0")
    }

    func testTimeoutsDefaultToTenSecondsForHandshakesAndFramesAndNoneForIdleConnections() throws {
        let defaults = try Options.parse([])
        XCTAssertEqual(defaults.handshakeTimeout, .seconds(10))
        XCTAssertEqual(defaults.frameTimeout, .seconds(10))
        XCTAssertNil(defaults.idleTimeout)
        let set = try Options.parse(
            ["--handshake-timeout", "0.5", "--frame-timeout=0"], environment: ["FAKE_APNS_IDLE_TIMEOUT": "300"])
        XCTAssertEqual(set.handshakeTimeout, .milliseconds(500))
        XCTAssertNil(set.frameTimeout)
        XCTAssertEqual(set.idleTimeout, .seconds(300))
        XCTAssertThrowsError(try Options.parse(["--idle-timeout", "-1"])) { error in
            XCTAssertTrue("\(error)".contains("--idle-timeout"), "\(error)")
        }
    }
}
