import FakeAPNs
import XCTest
// Reads internals on purpose: Options.parse and the parsed options.
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

    func testTheChannelPortDefaultsTo2198AndIsAnOptionAndAVariable() throws {
        XCTAssertEqual(try Options.parse([]).channelsPort, 2198)
        XCTAssertEqual(try Options.parse(["--channels-port", "0"]).channelsPort, 0)
        XCTAssertEqual(try Options.parse([], environment: ["FAKE_APNS_CHANNELS_PORT": "7198"]).channelsPort, 7198)
        XCTAssertThrowsError(try Options.parse(["--channels-port", "2197"])) { error in
            XCTAssertEqual("\(error)", "--http2-port and --channels-port both name port 2197; each listener needs its own")
        }
    }

    func testThePlaintextListenerIsOffByDefaultAndAnOptionAndAVariable() throws {
        XCTAssertNil(try Options.parse([]).plaintextPort)
        XCTAssertEqual(try Options.parse(["--plaintext-port", "0"]).plaintextPort, 0)
        XCTAssertEqual(try Options.parse([], environment: ["FAKE_APNS_PLAINTEXT_PORT": "8080"]).plaintextPort, 8080)
        XCTAssertThrowsError(try Options.parse(["--plaintext-port", "2197"])) { error in
            XCTAssertEqual("\(error)", "--http2-port and --plaintext-port both name port 2197; each listener needs its own")
        }
        XCTAssertThrowsError(try Options.parse(["--plaintext-port", "8080", "--auth", "certificate"])) { error in
            XCTAssertTrue(error is Options.UsageError)
            XCTAssertTrue("\(error)".contains("--plaintext-port cannot serve --auth certificate"), "\(error)")
        }
        XCTAssertNoThrow(try Options.parse(["--plaintext-port", "8080", "--auth", "token"]))
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

    func testTheSenderAuditsSettingsComeFromTheCommandLineOrTheEnvironment() throws {
        XCTAssertEqual(try Options.parse([]).senderAudit, SenderAuditSettings())
        let options = try Options.parse(
            ["--sender-audit", "off", "--same-push-window", "5", "--backoff-window", "0.25", "--churn-connections", "3"],
            environment: ["FAKE_APNS_CHURN_WINDOW": "10"])
        XCTAssertFalse(options.senderAudit.isEnabled)
        XCTAssertEqual(options.senderAudit.samePushWindow, .seconds(5))
        XCTAssertEqual(options.senderAudit.backoffWindow, .milliseconds(250))
        XCTAssertEqual(options.senderAudit.connectionChurnCount, 3)
        XCTAssertEqual(options.senderAudit.connectionChurnWindow, .seconds(10))
        for (arguments, message) in [
            (["--sender-audit", "maybe"], "--sender-audit takes on or off, not 'maybe'"),
            (["--backoff-window", "0"], "--backoff-window takes seconds from 0.001 to 86400, not '0'"),
            (["--same-push-window", "1e300"], "--same-push-window takes seconds from 0.001 to 86400, not '1e300'"),
            (["--churn-connections", "-1"], "--churn-connections takes a positive count, not '-1'"),
        ] {
            XCTAssertThrowsError(try Options.parse(arguments)) { error in XCTAssertEqual("\(error)", message) }
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

    func testContradictionsBetweenOptionsAreUsageErrorsNamingThem() {
        for (arguments, message) in [
            (["--key-passphrase", "x"], "--key-passphrase needs --cert and --key"),
            (["--trusted-ca", "ca.pem"], "--trusted-ca applies only with --client-certificates optional or required, or --auth certificate"),
            (["--feedback-port", "2197"], "--feedback-port and --http2-port both name port 2197; each listener needs its own"),
            (["--web-port", "2195"], "--gateway-port and --web-port both name port 2195; each listener needs its own"),
            (["serve", "extra"], "unexpected argument 'extra'"),
        ] {
            XCTAssertThrowsError(try Options.parse(arguments)) { error in
                XCTAssertTrue(error is Options.UsageError, "\(arguments): \(error)")
                XCTAssertTrue("\(error)".contains(message), "\(arguments): \(error)")
            }
        }
        XCTAssertNoThrow(try Options.parse(["--trusted-ca", "ca.pem", "--client-certificates", "optional"]))
        XCTAssertNoThrow(try Options.parse(["--trusted-ca", "ca.pem", "--auth", "certificate"]))
        XCTAssertNoThrow(try Options.parse(["--gateway-port", "0", "--feedback-port", "0"]), "port 0 picks a free one each")
        XCTAssertNoThrow(try Options.parse(["--web-host", "::1", "--web-port", "2195"]), "another address, another socket")
    }

    func testOneSecondIsSaidInTheSingular() {
        XCTAssertEqual(Duration.seconds(1).secondsPhrase, "1 second")
        XCTAssertEqual(Duration.seconds(10).secondsPhrase, "10 seconds")
        XCTAssertEqual(Duration.milliseconds(500).secondsPhrase, "0.5 seconds")
        XCTAssertEqual(ConnectionSettings(timeout: 1).timeoutPhrase, "1 second")
    }

    func testTheHelpSaysWhichFailuresExitOneAndWhichSixtyFour() {
        XCTAssertTrue(Options.help.contains("Usage errors exit 64. A failure to start exits 1"))
        XCTAssertTrue(Options.help.contains("fake-apns ca"))
        XCTAssertFalse(Options.help.contains("TestCerts/"))
    }
}
