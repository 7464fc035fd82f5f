import FakeAPNs
// Reads internals on purpose: the log line writer (JSONLineWriter, jsonLine, jsonObject).
@testable import FakeAPNsDaemon
import FakeAPNsTestSupport
import Foundation
import XCTest

/// The daemon's log line for a notification, byte for byte: scripts parse it, so a faster
/// writer must not change a single byte of it.
final class NotificationLogLineTests: XCTestCase {
    static func fixtures() -> [PushNotification] {
        let plain = ConnectionInfo(id: 3, peer: "127.0.0.1:9")
        let odd = ConnectionInfo(
            id: 41, peer: "[::1]:\"x\\y\"\u{1}",
            clientCertificate: ClientCertificateInfo(subject: "CN=Apple Push Services: com.example.app,UID=com.example.app", topic: "com.example.app"))
        let noTopic = ConnectionInfo(
            id: 42, peer: "10.0.0.1:1", clientCertificate: ClientCertificateInfo(subject: "CN=é\n", topic: nil))
        let dates: [Double] = [
            1_795_914_309.123456, 0, -1.5, 1_795_914_309.9999996, 1_795_914_309.0000004, 253_402_300_800.25,
            -62_135_596_800.5, 951_782_400.000001, 1_795_914_309.999999,
        ]
        let payloads: [Payload] = [
            Payload(#"{"aps":{"alert":"Hi"},"n":1}"#), Payload("not json"), Payload("{\n\"a\":1}"),
            Payload(#"{"s":"\ud83d\ude00"}"#), Payload("[1,2]"), Payload(""), Payload(bytes: [0xFF, 0xFE, 0x7B]),
            Payload(#" { "a" : [1.5e3, -0, true, null, "é\u{1F600}\t"] } "#), Payload("{\"a\":1}\r"),
            Payload(#"{"big":1e999}"#), Payload(#"{"k":"\u0001\"\\"}"#),
        ]
        let tokens: [DeviceToken] = [
            "fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2", DeviceToken(bytes: []),
            DeviceToken(bytes: (0..<40).map { UInt8($0 * 7 & 0xFF) }), "00",
        ]
        let http2: [PushNotification.HTTP2Fields?] = [
            nil,
            PushNotification.HTTP2Fields(
                apnsID: "0a1b2c3d-0000-4000-8000-000000000001", topic: "com.example.app", pushType: PushType(rawValue: "alert"),
                collapseID: "c\"1", providerToken: ProviderTokenClaims(keyID: "KEY123", teamID: "TEAM45", issuedAt: Date(timeIntervalSince1970: 5))),
            PushNotification.HTTP2Fields(apnsID: "id", topic: nil, pushType: nil, collapseID: nil, providerToken: nil),
        ]
        let formats: [PushNotification.Format] = [.enhanced, .simple, .frame, .http2]
        var result: [PushNotification] = []
        var sequence: UInt64 = 1
        for (index, payload) in payloads.enumerated() {
            for (other, date) in dates.enumerated() {
                let pick = index + other
                var notification = PushNotification(
                    deviceToken: tokens[pick % tokens.count], payload: payload,
                    identifier: pick % 3 == 0 ? UInt32.max : UInt32(pick), expiration: pick % 4 == 1 ? nil : UInt32(pick * 1000),
                    priority: Priority(rawValue: [10, 5, 1, -7][pick % 4]), format: formats[pick % formats.count],
                    connection: [plain, odd, noTopic][pick % 3], receivedAt: Date(timeIntervalSince1970: date),
                    sequenceNumber: pick % 5 == 0 ? UInt64(Int.max) : sequence, http2: http2[pick % http2.count])
                notification.sequenceNumber = pick % 5 == 0 ? UInt64(Int.max) : sequence
                sequence += 1
                result.append(notification)
            }
        }
        return result
    }

    /// Both writers say which transport carried a push, the plaintext listener's included.
    func testBothWritersSayTheTransport() {
        for transport in ConnectionTransport.allCases {
            let notification = PushNotification(
                deviceToken: "00", payload: Payload(#"{"a":1}"#), format: .http2,
                connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9", transport: transport))
            var writer = PushNotification.JSONLineWriter(event: "notification")
            var buffer: [UInt8] = []
            writer.append(notification, to: &buffer)
            let line = String(decoding: buffer.dropLast(), as: UTF8.self)
            XCTAssertEqual(line, notification.jsonLine(event: "notification"))
            XCTAssertTrue(line.hasSuffix(#","transport":"\#(transport.rawValue)"}"#), line)
        }
    }

    /// Every kind of record, every member: the log line and the tree are the same members in
    /// the same order with the same values (the line with `event` first), as both follow one
    /// schema, `PushNotification.writeRecord(to:)`.
    func testBothWritersWriteEveryMemberOfEveryKindAlike() throws {
        let claims = ProviderTokenClaims(keyID: "KEY123", teamID: "TEAM45", issuedAt: Date(timeIntervalSince1970: 5))
        let http2Names = ["apnsID", "topic", "pushType", "collapseID"]
        let kinds: [(format: PushNotification.Format, http2: PushNotification.HTTP2Fields?, names: [String])] = [
            (.simple, nil, []),
            (.enhanced, nil, []),
            (.frame, nil, []),
            (
                .http2,
                PushNotification.HTTP2Fields(
                    apnsID: "0a1b2c3d-0000-4000-8000-000000000001", topic: "com.example.app",
                    pushType: PushType(rawValue: "alert"), collapseID: "c\"1", providerToken: nil),
                http2Names
            ),
            (
                .http2,
                PushNotification.HTTP2Fields(apnsID: "id", topic: nil, pushType: nil, collapseID: nil, providerToken: claims),
                http2Names + ["keyID", "teamID"]
            ),
            (
                .broadcast,
                PushNotification.HTTP2Fields(
                    apnsID: "6B0C4F1E-2A3D-4C5B-8E9F-0A1B2C3D4E5F", topic: "com.example.app",
                    pushType: PushType(rawValue: "liveactivity"), collapseID: nil, providerToken: claims,
                    channelID: "dHN0LXU0NTY=", requestID: "6b0c4f1e-2a3d-4c5b-8e9f-0a1b2c3d4e5f",
                    uniqueID: "0f3c8a52-7d7e-4b8e-9e4f-2a1d6c5b4a39"),
                http2Names + ["keyID", "teamID", "channel", "requestID", "uniqueID"]
            ),
            (
                .broadcast,
                PushNotification.HTTP2Fields(
                    apnsID: "id", topic: "com.example.app", pushType: nil, collapseID: nil, providerToken: nil,
                    channelID: "c", requestID: nil, uniqueID: nil),
                http2Names + ["channel", "requestID", "uniqueID"]
            ),
        ]
        let certificates: [(ClientCertificateInfo?, [String])] = [
            (nil, []),
            (ClientCertificateInfo(subject: "CN=Apple Push Services: com.example.app", topic: "com.example.app"), ["clientSubject", "clientTopic"]),
            (ClientCertificateInfo(subject: "CN=é\n", topic: nil), ["clientSubject"]),
        ]
        // Written as the tree writes them (compact, no escapes to spare), then not.
        let payloads: [(Payload, names: [String], canonical: Bool)] = [
            (Payload(#"{"aps":{"alert":"Hi"},"n":1}"#), ["payload"], true),
            (Payload(#" { "a" : [1.5e3, -0, true, null] } "#), ["payload"], false),
            (Payload("{\n\"a\":1}"), ["payload"], false),
            (Payload("not json"), ["payload", "payloadText", "payloadError"], false),
            (Payload(bytes: [0xFF, 0xFE, 0x7B]), ["payload", "payloadBase64", "payloadError"], false),
        ]
        var checked = 0
        for (kindIndex, kind) in kinds.enumerated() {
            for transport in ConnectionTransport.allCases {
                for (certificate, certificateNames) in certificates {
                    let connection = ConnectionInfo(
                        id: 7 + kindIndex, peer: "127.0.0.1:9", clientCertificate: certificate, transport: transport)
                    for (payload, payloadNames, canonical) in payloads {
                        var notification = PushNotification(
                            deviceToken: Fixtures.token, payload: payload, identifier: 9, expiration: kindIndex % 2 == 0 ? nil : 60,
                            priority: Priority(rawValue: 5), format: kind.format, connection: connection,
                            receivedAt: Date(timeIntervalSince1970: 1_795_914_309.123456), http2: kind.http2)
                        notification.sequenceNumber = UInt64(checked + 1)
                        let line = notification.jsonLine(event: "notification")
                        let tree = notification.jsonObject
                        let parsed = try JSONValue(parsing: line)
                        let names = ["sequence", "token"] + payloadNames + ["identifier", "expiration", "priority", "format"]
                            + kind.names + ["lint", "receivedAt", "connection", "peer", "transport"] + certificateNames
                        let context = "\(kind.format) \(kind.names) \(transport) \(certificateNames) \(payloadNames)"
                        XCTAssertEqual(tree.objectValue.map { Array($0.keys) }, names, context)
                        // The line has the lint's findings only when the intake judged them (the
                        // lint stage, or the device model with findings), and then the tree's.
                        var judgedPush = notification
                        judgedPush.judgedLintFindings =
                            (checked % 2 == 0) ? [LintFinding(.missingPushType, "no \"apns-push-type\"")] : nil
                        judgedPush.deviceLintFindings = (checked % 3 == 0) ? [LintFinding(.offlineBurst, "a\nburst")] : []
                        let judgedLine = try JSONValue(parsing: judgedPush.jsonLine(event: "notification"))
                        XCTAssertEqual(judgedLine["lint"], judgedPush.lintFindingsIfJudged.map(PhoneJSON.lint), context)
                        if judgedPush.isLintJudged {
                            var judgedTree = judgedPush.jsonObject.objectValue.map(Array.init) ?? []
                            judgedTree.insert((key: "event", value: "notification"), at: 0)
                            XCTAssertEqual(judgedLine, .object(JSONObject(judgedTree)), context)
                        }
                        XCTAssertEqual(parsed.objectValue.map { Array($0.keys) }, ["event"] + names.filter { $0 != "lint" }, context)
                        var expected = tree.objectValue.map { Array($0) }?.filter { $0.key != "lint" } ?? []
                        expected.insert((key: "event", value: "notification"), at: 0)
                        XCTAssertEqual(parsed, .object(JSONObject(expected)), context)
                        XCTAssertEqual(parsed["transport"]?.stringValue, transport.rawValue, context)
                        XCTAssertEqual(parsed["format"]?.stringValue, kind.format.rawValue, context)
                        if canonical {
                            let unlinted = JSONValue.object(JSONObject(Array(expected.dropFirst())))
                            XCTAssertEqual(line, #"{"event":"notification","# + unlinted.serialized().dropFirst(), context)
                        }
                        checked += 1
                    }
                }
            }
        }
        XCTAssertEqual(checked, kinds.count * ConnectionTransport.allCases.count * certificates.count * payloads.count)
    }

    /// Lines as the daemon wrote them before its writer formatted into one buffer (captured
    /// from that implementation): the fixture's index and its line.
    static let expectedLines: [(Int, String)] = [
        (0, #"{"event":"notification","sequence":9223372036854775807,"token":"fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2","payload":{"aps":{"alert":"Hi"},"n":1},"identifier":4294967295,"expiration":0,"priority":10,"format":"enhanced","receivedAt":"2026-11-29T01:05:09.123456Z","connection":3,"peer":"127.0.0.1:9","transport":"tls"}"#),
        (1, #"{"event":"notification","sequence":2,"token":"","payload":{"aps":{"alert":"Hi"},"n":1},"identifier":1,"expiration":null,"priority":5,"format":"simple","apnsID":"0a1b2c3d-0000-4000-8000-000000000001","topic":"com.example.app","pushType":"alert","collapseID":"c\"1","keyID":"KEY123","teamID":"TEAM45","receivedAt":"1970-01-01T00:00:00.000000Z","connection":41,"peer":"[::1]:\"x\\y\"\u0001","transport":"tls","clientSubject":"CN=Apple Push Services: com.example.app,UID=com.example.app","clientTopic":"com.example.app"}"#),
        (2, #"{"event":"notification","sequence":3,"token":"00070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d9e0e7eef5fc030a11","payload":{"aps":{"alert":"Hi"},"n":1},"identifier":2,"expiration":2000,"priority":1,"format":"frame","apnsID":"id","topic":null,"pushType":null,"collapseID":null,"receivedAt":"1969-12-31T23:59:58.500000Z","connection":42,"peer":"10.0.0.1:1","transport":"tls","clientSubject":"CN=é\n"}"#),
        (3, #"{"event":"notification","sequence":4,"token":"00","payload":{"aps":{"alert":"Hi"},"n":1},"identifier":4294967295,"expiration":3000,"priority":-7,"format":"http2","receivedAt":"2026-11-29T01:05:10.000000Z","connection":3,"peer":"127.0.0.1:9","transport":"tls"}"#),
        (5, #"{"event":"notification","sequence":9223372036854775807,"token":"","payload":{"aps":{"alert":"Hi"},"n":1},"identifier":5,"expiration":null,"priority":5,"format":"simple","apnsID":"id","topic":null,"pushType":null,"collapseID":null,"receivedAt":"9999-12-31T23:59:59.999999Z","connection":42,"peer":"10.0.0.1:1","transport":"tls","clientSubject":"CN=é\n"}"#),
        (6, #"{"event":"notification","sequence":7,"token":"00070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d9e0e7eef5fc030a11","payload":{"aps":{"alert":"Hi"},"n":1},"identifier":4294967295,"expiration":6000,"priority":1,"format":"frame","receivedAt":"0000-12-31T23:59:59.500000Z","connection":3,"peer":"127.0.0.1:9","transport":"tls"}"#),
        (7, #"{"event":"notification","sequence":8,"token":"00","payload":{"aps":{"alert":"Hi"},"n":1},"identifier":7,"expiration":7000,"priority":-7,"format":"http2","apnsID":"0a1b2c3d-0000-4000-8000-000000000001","topic":"com.example.app","pushType":"alert","collapseID":"c\"1","keyID":"KEY123","teamID":"TEAM45","receivedAt":"2000-02-29T00:00:00.000001Z","connection":41,"peer":"[::1]:\"x\\y\"\u0001","transport":"tls","clientSubject":"CN=Apple Push Services: com.example.app,UID=com.example.app","clientTopic":"com.example.app"}"#),
        (8, #"{"event":"notification","sequence":9,"token":"fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2","payload":{"aps":{"alert":"Hi"},"n":1},"identifier":8,"expiration":8000,"priority":10,"format":"enhanced","apnsID":"id","topic":null,"pushType":null,"collapseID":null,"receivedAt":"2026-11-29T01:05:09.999999Z","connection":42,"peer":"10.0.0.1:1","transport":"tls","clientSubject":"CN=é\n"}"#),
        (9, #"{"event":"notification","sequence":10,"token":"","payload":null,"payloadText":"not json","payloadError":"invalid literal, expected 'null' at byte 0","identifier":1,"expiration":null,"priority":5,"format":"simple","apnsID":"0a1b2c3d-0000-4000-8000-000000000001","topic":"com.example.app","pushType":"alert","collapseID":"c\"1","keyID":"KEY123","teamID":"TEAM45","receivedAt":"2026-11-29T01:05:09.123456Z","connection":41,"peer":"[::1]:\"x\\y\"\u0001","transport":"tls","clientSubject":"CN=Apple Push Services: com.example.app,UID=com.example.app","clientTopic":"com.example.app"}"#),
        (18, #"{"event":"notification","sequence":19,"token":"00070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d9e0e7eef5fc030a11","payload":{"a":1},"identifier":2,"expiration":2000,"priority":1,"format":"frame","apnsID":"id","topic":null,"pushType":null,"collapseID":null,"receivedAt":"2026-11-29T01:05:09.123456Z","connection":42,"peer":"10.0.0.1:1","transport":"tls","clientSubject":"CN=é\n"}"#),
        (27, #"{"event":"notification","sequence":28,"token":"00","payload":{"s":"😀"},"identifier":4294967295,"expiration":3000,"priority":-7,"format":"http2","receivedAt":"2026-11-29T01:05:09.123456Z","connection":3,"peer":"127.0.0.1:9","transport":"tls"}"#),
        (36, #"{"event":"notification","sequence":37,"token":"fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2","payload":null,"payloadText":"[1,2]","payloadError":"payload must be a JSON object, found an array at byte 0","identifier":4,"expiration":4000,"priority":10,"format":"enhanced","apnsID":"0a1b2c3d-0000-4000-8000-000000000001","topic":"com.example.app","pushType":"alert","collapseID":"c\"1","keyID":"KEY123","teamID":"TEAM45","receivedAt":"2026-11-29T01:05:09.123456Z","connection":41,"peer":"[::1]:\"x\\y\"\u0001","transport":"tls","clientSubject":"CN=Apple Push Services: com.example.app,UID=com.example.app","clientTopic":"com.example.app"}"#),
        (45, #"{"event":"notification","sequence":9223372036854775807,"token":"","payload":null,"payloadText":"","payloadError":"expected a JSON value, but the input ended at byte 0","identifier":5,"expiration":null,"priority":5,"format":"simple","apnsID":"id","topic":null,"pushType":null,"collapseID":null,"receivedAt":"2026-11-29T01:05:09.123456Z","connection":42,"peer":"10.0.0.1:1","transport":"tls","clientSubject":"CN=é\n"}"#),
        (54, #"{"event":"notification","sequence":55,"token":"00070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d9e0e7eef5fc030a11","payload":null,"payloadBase64":"//57","payloadError":"expected a JSON value at byte 0","identifier":4294967295,"expiration":6000,"priority":1,"format":"frame","receivedAt":"2026-11-29T01:05:09.123456Z","connection":3,"peer":"127.0.0.1:9","transport":"tls"}"#),
        (63, #"{"event":"notification","sequence":64,"token":"00","payload":null,"payloadText":" { \"a\" : [1.5e3, -0, true, null, \"é\\u{1F600}\\t\"] } ","payloadError":"invalid \\u escape: expected four hex digits at byte 36","identifier":7,"expiration":7000,"priority":-7,"format":"http2","apnsID":"0a1b2c3d-0000-4000-8000-000000000001","topic":"com.example.app","pushType":"alert","collapseID":"c\"1","keyID":"KEY123","teamID":"TEAM45","receivedAt":"2026-11-29T01:05:09.123456Z","connection":41,"peer":"[::1]:\"x\\y\"\u0001","transport":"tls","clientSubject":"CN=Apple Push Services: com.example.app,UID=com.example.app","clientTopic":"com.example.app"}"#),
        (72, #"{"event":"notification","sequence":73,"token":"fe15a27d5df3c34778defb1f4f3880265cc52c0c047682223be59fb68500a9a2","payload":{"a":1},"identifier":8,"expiration":8000,"priority":10,"format":"enhanced","apnsID":"id","topic":null,"pushType":null,"collapseID":null,"receivedAt":"2026-11-29T01:05:09.123456Z","connection":42,"peer":"10.0.0.1:1","transport":"tls","clientSubject":"CN=é\n"}"#),
        (81, #"{"event":"notification","sequence":82,"token":"","payload":null,"payloadText":"{\"big\":1e999}","payloadError":"number is out of range for a double at byte 7","identifier":4294967295,"expiration":null,"priority":5,"format":"simple","receivedAt":"2026-11-29T01:05:09.123456Z","connection":3,"peer":"127.0.0.1:9","transport":"tls"}"#),
        (90, #"{"event":"notification","sequence":9223372036854775807,"token":"00070e151c232a31383f464d545b626970777e858c939aa1a8afb6bdc4cbd2d9e0e7eef5fc030a11","payload":{"k":"\u0001\"\\"},"identifier":10,"expiration":10000,"priority":1,"format":"frame","apnsID":"0a1b2c3d-0000-4000-8000-000000000001","topic":"com.example.app","pushType":"alert","collapseID":"c\"1","keyID":"KEY123","teamID":"TEAM45","receivedAt":"2026-11-29T01:05:09.123456Z","connection":41,"peer":"[::1]:\"x\\y\"\u0001","transport":"tls","clientSubject":"CN=Apple Push Services: com.example.app,UID=com.example.app","clientTopic":"com.example.app"}"#),
    ]

    func testLinesAreByteForByteWhatTheDaemonHasAlwaysLogged() {
        let fixtures = Self.fixtures()
        for (index, expected) in Self.expectedLines {
            XCTAssertEqual(fixtures[index].jsonLine(event: "notification"), expected, "fixture \(index)")
        }
    }

    func testEventNameIsEscaped() {
        let line = Self.fixtures()[0].jsonLine(event: "x\"y")
        XCTAssertTrue(line.hasPrefix(#"{"event":"x\"y","sequence":9223372036854775807,"token":"#), line)
    }

    /// One writer for many lines reuses the formatted second and connection; every line must
    /// still be exactly the notification's own, whatever came before it.
    func testWriterGivesEachNotificationsOwnLine() throws {
        let fixtures = Self.fixtures()
        // In order, then with the same notification repeated, then shuffled (seconds and
        // connections changing back and forth).
        var generator = SeededRandom(seed: 7)
        let orders = [Array(fixtures.indices), fixtures.indices.flatMap { [$0, $0] }, fixtures.indices.shuffled(using: &generator)]
        for order in orders {
            var writer = PushNotification.JSONLineWriter(event: "notification")
            var buffer: [UInt8] = []
            var expected = ""
            for index in order {
                writer.append(fixtures[index], to: &buffer)
                expected += fixtures[index].jsonLine(event: "notification") + "\n"
            }
            XCTAssertEqual(String(decoding: buffer, as: UTF8.self), expected)
        }
    }

    func testLinesWithinOneSecondShareItsTextAndKeepTheirMicroseconds() {
        let connection = ConnectionInfo(id: 1, peer: "127.0.0.1:1")
        var writer = PushNotification.JSONLineWriter(event: "notification")
        var buffer: [UInt8] = []
        let base = 1_795_914_309.0
        for (sequence, offset) in [0.000001, 0.5, 0.9999994, 0.9999996, 1.25, 0.75].enumerated() {
            var notification = PushNotification(
                deviceToken: Fixtures.token, payload: Payload(#"{"a":1}"#), format: .enhanced, connection: connection,
                receivedAt: Date(timeIntervalSince1970: base + offset))
            notification.sequenceNumber = UInt64(sequence + 1)
            writer.append(notification, to: &buffer)
        }
        let stamps = String(decoding: buffer, as: UTF8.self).split(separator: "\n").map { line in
            String(line.split(separator: #""receivedAt":""#)[1].prefix(27))
        }
        XCTAssertEqual(stamps, [
            "2026-11-29T01:05:09.000001Z", "2026-11-29T01:05:09.500000Z", "2026-11-29T01:05:09.999999Z",
            "2026-11-29T01:05:10.000000Z", "2026-11-29T01:05:10.250000Z", "2026-11-29T01:05:09.750000Z",
        ])
    }

    func testIntegersOfEveryLengthAreWrittenAsTheirDecimalText() {
        var numbers: [Int] = [0, Int.max, Int.max - 1]
        var power = 1
        for _ in 0..<18 {
            power *= 10
            numbers += [power - 1, power, power + 1, power * 5 + 3]
        }
        for number in numbers {
            var notification = PushNotification(
                deviceToken: Fixtures.token, payload: Payload("{}"), format: .enhanced,
                connection: ConnectionInfo(id: number, peer: "p"))
            notification.sequenceNumber = UInt64(number)
            notification.priority = Priority(rawValue: -number)
            notification.identifier = UInt32(truncatingIfNeeded: number)
            let line = notification.jsonLine(event: "notification")
            XCTAssertTrue(line.contains(#""sequence":\#(number),"#), line)
            XCTAssertTrue(line.contains(#""priority":\#(-number),"#), line)
            XCTAssertTrue(line.contains(#""identifier":\#(UInt32(truncatingIfNeeded: number)),"#), line)
            XCTAssertTrue(line.contains(#""connection":\#(number),"#), line)
        }
    }

    func testTimestampMatchesTheOneLoggedInTheLine() {
        for notification in Self.fixtures() {
            let line = notification.jsonLine(event: "notification")
            XCTAssertTrue(line.contains(#""receivedAt":""# + Timestamp.rfc3339(notification.receivedAt) + "\""), line)
        }
    }
}
