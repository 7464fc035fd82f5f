import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

// Reads internals on purpose: the help texts, where they are written (Options.help, SendCommand.help, …).
@testable import FakeAPNsDaemon

/// Every example of every `--help` works as pasted into a shell, against a daemon started with
/// no options (the examples' default ports are swapped for the ones this daemon bound), or with
/// `--auth token` for the examples that send a token.
final class HelpExampleTests: XCTestCase {
    /// The default ports of a daemon and the ones it bound.
    private func ports(of daemon: DaemonFixture) throws -> [(Int, Int)] {
        let defaults = ["gateway": 2195, "feedback": 2196, "http2": 2197, "channels": 2198, "web": 8195]
        return try XCTUnwrap(daemon.startLine["listeners"]?.arrayValue).map { listener in
            (defaults[listener["name"]?.stringValue ?? ""] ?? 0, listener["port"]?.intValue ?? 0)
        }
    }

    /// The example command lines of a help text: its lines that start a client or curl.
    private func examples(_ help: String) -> [String] {
        help.split(separator: "\n").map(String.init)
            .filter { $0.hasPrefix("  curl ") || ($0.hasPrefix("  fake-apns ") && !$0.hasPrefix("  fake-apns --")) }
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The example as run here: each default port swapped for the bound one, the port given to
    /// the client commands, which otherwise assume the default, and `<channel-id>` replaced by
    /// the id the last example that created a channel printed.
    private func adapted(_ example: String, ports: [(Int, Int)], channelID: String?) -> String {
        var line = example
        if let channelID { line = line.replacingOccurrences(of: "<channel-id>", with: channelID) }
        for (usual, bound) in ports { line = line.replacingOccurrences(of: ":\(usual)/", with: ":\(bound)/") }
        let port = { (usual: Int) in ports.first { $0.0 == usual }!.1 }
        if line.hasPrefix("fake-apns send") {
            line += " --port \(port(line.contains("--protocol binary") ? 2195 : 2197))"
        } else if line.hasPrefix("fake-apns feedback") {
            line += " --port \(port(2196))"
        } else if line.hasPrefix("fake-apns channels") {
            line += " --port \(port(2198))"
        }
        return line
    }

    func testEveryExampleWorksAsPasted() throws {
        let plain = try ports(of: DaemonFixture.started(for: self))
        let token = try ports(of: DaemonFixture.started(["--auth", "token"], for: self))
        let helps = [
            ("fake-apns", Options.help), ("send", SendCommand.help), ("feedback", FeedbackCommand.help),
            ("token", TokenCommand.help), ("ca", CACommand.help), ("channels", ChannelsCommand.help),
        ]
        var ran = 0
        var channelID: String?
        for (command, help) in helps {
            let lines = examples(help)
            XCTAssertFalse(lines.isEmpty, "fake-apns \(command) --help shows no example")
            for example in lines {
                let line = adapted(example, ports: example.contains("bearer") ? token : plain, channelID: channelID)
                XCTAssertFalse(line.contains("<channel-id>"), "no example created a channel before: \(line)")
                let run = try ChildProcess.shell(line + " 2>&1")
                XCTAssertEqual(run.status, 0, "\(command): \(line)\n\(run.output)")
                if let created = (try? JSONValue.parse(Array(run.output.utf8)))?["channelID"]?.stringValue {
                    channelID = created
                }
                XCTAssertFalse(run.output.contains(#""reason":""#), "refused: \(line)\n\(run.output)")
                ran += 1
            }
        }
        XCTAssertGreaterThanOrEqual(ran, 12)
    }

    func testHelpShowsNoPathOfThisCheckoutAndNoCutToken() {
        for help in [
            Options.help, SendCommand.help, FeedbackCommand.help, TokenCommand.help, CACommand.help, ChannelsCommand.help,
            TrustCommand.help,
        ] {
            XCTAssertFalse(help.contains("TestCerts/"), help)
            XCTAssertFalse(help.contains("fe15a27d..."), help)
            XCTAssertFalse(help.contains("\"...\""), help)
        }
    }
}
