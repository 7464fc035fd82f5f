import FakeAPNsTestSupport
import Foundation
import XCTest
import FakeAPNs

/// A Live Activity date no phone can use (past year 9999, before 1970, a fraction, a string)
/// is answered Apple's 200, and the phone ignores the push: nothing traps when the phone is
/// then described, shown, changed or its log read, whichever way the push came. Sent with curl
/// and python3-h2.
final class ScenarioLiveActivityDateTests: ScenarioTestCase {
    /// The smallest value that used to trap: Int64.max − 511 seconds.
    private static let farFuture = "9223372036854775296"
    private static let fields = ["timestamp", "stale-date", "dismissal-date"]

    private func start(_ field: String, _ value: String) -> String {
        var dates = ["timestamp": "1800000000"]
        dates[field] = value
        let text = dates.sorted { $0.key < $1.key }.map { #""\#($0.key)":\#($0.value)"# }.joined(separator: ",")
        return #"{"aps":{"event":"start",\#(text),"content-state":{"score":"0-0"},"attributes-type":"Match","#
            + #""attributes":{},"alert":{"title":"Kick-off"}}}"#
    }

    private func assertIgnored(
        _ log: [DeliveryLogEntry], naming field: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(log.map(\.status), [.received, .ignoredLiveActivity], file: file, line: line)
        XCTAssertTrue(log.last?.detail?.hasPrefix("\(field) ") == true, "\(log)", file: file, line: line)
    }

    func testAFarFutureDateToADescribedPhoneIsIgnoredAndNothingTraps() throws {
        for field in Self.fields {
            let push = WirePush.device(
                Scenario.token, start(field, Self.farFuture), topic: Scenario.liveActivityTopic,
                pushType: "liveactivity")
            XCTAssertEqual(try Curl.send(push, to: server).status, 200, "Apple's 200")
            assertIgnored(phone.log(apnsID: push.apnsID!), naming: field)
            let record = server.notificationHistory.list().first { $0.apnsID == push.apnsID }
            let finding = try XCTUnwrap(record?.lintFindings.first { $0.rule == .liveActivityDate }, "\(field)")
            XCTAssertEqual(finding.level, .error)
            XCTAssertTrue(finding.message.contains(field), finding.message)
            XCTAssertEqual(phone.screen.liveActivities, [], "no activity on the screen")
            phone.update { $0.isOnline.toggle() }
            phone.update { $0.isOnline.toggle() }
        }
        server.clock.advance(by: .seconds(24 * 3600))
        XCTAssertEqual(phone.screen.liveActivities, [])
    }

    func testAFarFutureDateToAPhoneDescribedLaterIsIgnoredWhenItIsCaughtUp() throws {
        let later = DeviceToken(bytes: [UInt8](repeating: 0x5E, count: 32))
        let pushes = Self.fields.map { field in
            WirePush.device(later, start(field, Self.farFuture), topic: Scenario.liveActivityTopic, pushType: "liveactivity")
        }
        XCTAssertEqual(try PythonH2.send(pushes, to: server).map(\.status), [200, 200, 200])
        let phone = server.device(later)
        for (field, push) in zip(Self.fields, pushes) { assertIgnored(phone.log(apnsID: push.apnsID!), naming: field) }
        XCTAssertEqual(phone.screen.liveActivities, [])
    }

    func testAFarFutureDateThroughAChannelIsIgnored() throws {
        let channel = try server.channels.create(bundleID: Scenario.bundle, storagePolicy: .mostRecentMessage)
        try server.channels.subscribe(Scenario.token, to: channel.id)
        for field in Self.fields {
            let stamp = field == "timestamp" ? "" : #""timestamp":1800000000,"#
            let body = #"{"aps":{"event":"update",\#(stamp)"\#(field)":\#(Self.farFuture),"content-state":{}}}"#
            let answer = try Curl.send(WirePush.broadcast(channel.id, body), to: server)
            XCTAssertEqual(answer.status, 200)
            let uniqueID = try XCTUnwrap(answer.apnsUniqueID)
            assertIgnored(server.deliveryLog(uniqueID: uniqueID), naming: field)
        }
        XCTAssertEqual(phone.screen.liveActivities, [])
    }

    /// Before 1970, a fraction of a second and a string are no dates either; a whole number of
    /// seconds written as a double is one.
    func testOnlyAWholeNumberOfSecondsFrom1970ToYear9999IsADate() throws {
        for (value, usable) in [("-1", false), ("1800000000.5", false), (#""soon""#, false), ("1.8e9", true)] {
            let push = WirePush.device(
                Scenario.token, start("stale-date", value), topic: Scenario.liveActivityTopic, pushType: "liveactivity")
            XCTAssertEqual(try Curl.send(push, to: server).status, 200)
            let statuses = phone.log(apnsID: push.apnsID!).map(\.status)
            XCTAssertEqual(statuses.last, usable ? .deliveredToDevice : .ignoredLiveActivity, "stale-date \(value)")
        }
        XCTAssertEqual(phone.screen.liveActivities.first?.staleDate, Date(timeIntervalSince1970: 1_800_000_000))
    }
}
