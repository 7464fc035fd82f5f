import FakeAPNsTestSupport
import Foundation
import XCTest
// Reads internals on purpose: TLSClient, to send close_notify and read the gateway's answer as the providers it plays do.
@testable import FakeAPNs

/// Tests written as users of FakeAPNs write them: a provider under test, the fake in place of
/// Apple, and assertions on what arrived.
final class ScenarioTests: XCTestCase {
    private let fixture = ServerFixture()
    private var server: FakeAPNsServer { fixture.server }

    override func setUpWithError() throws {
        try fixture.start(for: self)
    }

    // MARK: - A portal sending one message to every device of a user

    /// A provider in the style of the Liferay Push portal: a portal message is a flat map;
    /// `body` becomes `aps.alert`, `silent: true` becomes `content-available: 1`, `sound` and
    /// `badge` go into `aps`, every other key goes beside `aps`.
    private struct PortalPushSender {
        let host: String
        let port: Int
        var nextIdentifier: UInt32 = 1

        func payload(for message: [String: JSONValue]) -> JSONValue {
            var aps: [(key: String, value: JSONValue)] = []
            var custom: [(key: String, value: JSONValue)] = []
            for (key, value) in message.sorted(by: { $0.key < $1.key }) {
                switch key {
                case "body": aps.append(("alert", value))
                case "silent": if value == true { aps.append(("content-available", 1)) }
                case "sound", "badge": aps.append((key, value))
                default: custom.append((key, value))
                }
            }
            return .object(JSONObject([(key: "aps", value: .object(JSONObject(aps)))] + custom))
        }

        mutating func send(_ message: [String: JSONValue], to tokens: [DeviceToken]) throws {
            let client = try TLSClient(host: host, port: port)
            defer { client.close() }
            let bytes = Array(payload(for: message).serialized().utf8)
            var frames: [UInt8] = []
            for token in tokens {
                frames += BinaryEncoder.enhanced(identifier: nextIdentifier, expiration: 0, token: token, payload: bytes)
                nextIdentifier += 1
            }
            try client.send(frames)
        }
    }

    func testPortalMessageReachesEveryDeviceOfTheUserAndUninstallsShowOnFeedback() throws {
        let phone: DeviceToken = "1111111111111111111111111111111111111111111111111111111111111111"
        let tablet: DeviceToken = "2222222222222222222222222222222222222222222222222222222222222222"
        server.devices.isStrict = true
        server.devices.register(phone, environment: .sandbox)
        server.devices.register(tablet, environment: .sandbox)

        var portal = PortalPushSender(host: "127.0.0.1", port: server.gatewayPort)
        try portal.send(
            ["body": "Your order shipped", "silent": true, "sound": "chime.caf", "badge": 4, "orderId": 981, "entryClassName": "Order"],
            to: [phone, tablet])

        let received = try server.notifications.pop(count: 2, timeout: .seconds(5))
        XCTAssertEqual(Set(received.map(\.deviceToken)), [phone, tablet])
        for notification in received {
            let aps = notification.payload.aps
            XCTAssertEqual(aps.alert?.body, "Your order shipped")
            XCTAssertEqual(aps.alert?.isPlainString, true)
            XCTAssertTrue(aps.contentAvailable)
            XCTAssertEqual(aps["content-available"], 1)
            XCTAssertEqual(aps.sound?.name, "chime.caf")
            XCTAssertEqual(aps.badge, 4)
            XCTAssertEqual(notification.payload.customKeys.keys.sorted(), ["entryClassName", "orderId"])
            XCTAssertEqual(notification.payload["orderId"], 981)
            XCTAssertEqual(notification.payload["entryClassName"], "Order")
            XCTAssertNil(aps["body"])
            XCTAssertNil(aps["silent"])
        }

        // The user uninstalls the app from the tablet.
        let uninstalled = Date(timeIntervalSince1970: 1_764_000_000)
        server.devices.unregister(tablet, at: uninstalled)
        let feedback = try FeedbackClient.read(host: "127.0.0.1", port: fixture.feedbackPort)
        XCTAssertEqual(feedback, [FeedbackTuple(timestamp: 1_764_000_000, deviceToken: tablet)])
        XCTAssertEqual(feedback.first?.date, uninstalled)
        XCTAssertEqual(try FeedbackClient.read(host: "127.0.0.1", port: fixture.feedbackPort), [])
    }

    // MARK: - The classic tutorial sender

    func testCommandZeroSenderWithATokenInNSDataDescriptionFormIsReceived() throws {
        // What `[deviceToken description]` printed on iOS, pasted into a PHP or Objective-C
        // sender that strips the brackets and spaces and packs the hex, as the tutorials did.
        let described = "<fe15a27d 5df3c347 78defb1f 4f388026 5cc52c0c 04768222 3be59fb6 8500a9a2>"
        let hex = described.filter { $0 != "<" && $0 != ">" && $0 != " " }
        var token: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            token.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        let body = Array(#"{"aps":{"alert":"You have mail","sound":"default"}}"#.utf8)
        let frame = [0, 0, 32] + token + [UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body

        let client = try server.connectClient()
        try client.send(frame)
        let notification = try server.notifications.pop(timeout: .seconds(5))
        XCTAssertEqual(notification.format, .simple)
        XCTAssertEqual(notification.deviceToken, try DeviceToken(hex: described))
        XCTAssertEqual(notification.deviceToken.hex, "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2")
        XCTAssertEqual(notification.payload.aps.alert?.body, "You have mail")
    }

    // MARK: - A client that resends after an error

    /// Keeps what it sent; after an error response it reconnects and resends everything that
    /// followed the refused identifier, as PyAPNs and node-apn did.
    private struct ResendingClient {
        let host: String
        let port: Int
        private(set) var connections = 0
        private(set) var errors: [BinaryErrorResponse] = []

        init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        mutating func send(_ notifications: [(identifier: UInt32, token: DeviceToken, payload: [UInt8])]) throws {
            var pending = notifications[...]
            while !pending.isEmpty {
                let client = try TLSClient(host: host, port: port)
                connections += 1
                try client.send(pending.flatMap {
                    BinaryEncoder.enhanced(identifier: $0.identifier, token: $0.token, payload: $0.payload)
                })
                // Done sending: close our side and see whether the gateway complained.
                client.stream.sendCloseNotify()
                guard let error = BinaryErrorResponse(bytes: try client.readToEnd()) else { return }
                errors.append(error)
                guard let refused = pending.firstIndex(where: { $0.identifier == error.identifier }) else { return }
                pending = pending[(refused + 1)...]
            }
        }
    }

    func testResendAfterErrorDeliversEverythingButTheBadOneExactlyOnce() throws {
        let bad: DeviceToken = "baadf00dbaadf00dbaadf00dbaadf00dbaadf00dbaadf00dbaadf00dbaadf00d"
        server.faults.add(FaultRule(match: .token(bad), action: .reject(.invalidToken), times: .always))
        let batch = (1...40).map { number in
            (identifier: UInt32(number), token: number == 13 || number == 29 ? bad : Fixtures.token, payload: Fixtures.payload(number))
        }
        var client = ResendingClient(host: "127.0.0.1", port: server.gatewayPort)
        try client.send(batch)

        XCTAssertEqual(client.errors, [
            BinaryErrorResponse(status: .invalidToken, identifier: 13),
            BinaryErrorResponse(status: .invalidToken, identifier: 29),
        ])
        XCTAssertEqual(client.connections, 3)
        let delivered = server.notifications.removeAll().map(\.identifier)
        XCTAssertEqual(delivered, (1...40).filter { $0 != 13 && $0 != 29 }.map(UInt32.init))
        XCTAssertEqual(server.rejections.removeAll().map(\.identifier), [13, 29])
    }
}
