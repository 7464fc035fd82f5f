import FakeAPNs
import FakeAPNsTestSupport
import Foundation
import XCTest

/// `fake-apns channels` and `fake-apns send --broadcast` against a running `fake-apns`: the
/// daemon's channel-management listener and its provider listener, read back through the log.
final class ChannelsAgainstDaemonTests: XCTestCase {
    private func run(_ arguments: [String]) throws -> (status: Int32, json: JSONValue) {
        let result = try runTool(DaemonFixture.executable.path, arguments)
        XCTAssertEqual(result.status, 0, result.error)
        let line = try XCTUnwrap(result.output.split(separator: "\n").first.map(String.init), result.error)
        return (result.status, try JSONValue(parsing: line))
    }

    func testTheCommandsCreateAChannelAndBroadcastToItThroughTheDaemon() throws {
        let daemon = try DaemonFixture.started(for: self)
        let channelsPort = try daemon.port("channels")
        let http2Port = try daemon.port("http2")

        let created = try run(["channels", "create", "--bundle", "com.example.app", "--port", String(channelsPort)]).json
        XCTAssertEqual(created["status"]?.intValue, 201)
        let channelID = try XCTUnwrap(created["channelID"]?.stringValue)
        XCTAssertEqual(try daemon.next(["channel-created"])["channel"]?.stringValue, channelID)

        let sent = try run([
            "send", "--broadcast", "--channel", channelID, "--bundle", "com.example.app", "--alert", "2-1",
            "--port", String(http2Port),
        ]).json
        XCTAssertEqual(sent["status"]?.intValue, 200)
        let notification = try daemon.next(["notification"])
        XCTAssertEqual(notification["format"]?.stringValue, "broadcast")
        XCTAssertEqual(notification["channel"]?.stringValue, channelID)
        XCTAssertEqual(notification["uniqueID"], sent["uniqueID"])

        let listed = try run(["channels", "list", "--bundle", "com.example.app", "--port", String(channelsPort)]).json
        XCTAssertEqual(listed["channels"]?.arrayValue?.compactMap(\.stringValue), [channelID])
    }
}
