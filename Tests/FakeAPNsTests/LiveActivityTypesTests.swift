import FakeAPNsTestSupport
import Foundation
import XCTest

@testable import FakeAPNs

/// Live Activity pushes decoded as the app declares its attributes types: mismatches, Unix
/// times in `Date` fields, the `event`, a start's empty alert, and the declarations' bounds.
/// Pure: each push is built by hand and judged by the push lint.
final class LiveActivityTypesTests: XCTestCase {
    private static let bundle = "com.example.food"
    /// The server's clock when the pushes come: 2027-01-15 08:00 UTC.
    private static let receivedAt = Date(timeIntervalSince1970: 1_800_000_000)
    private static let delivery = LiveActivityType(
        attributes: ["orderID": .string],
        contentState: ["status": .string, "eta": .date, "courier": .string.optional, "stops": .integer])
    private let app = AppBundle(liveActivityTypes: ["DeliveryAttributes": delivery])

    private func push(_ aps: String) -> PushNotification {
        PushNotification(
            deviceToken: Fixtures.token, payload: Payload(#"{"aps":{\#(aps)}}"#), expiration: nil,
            priority: .immediately, format: .http2, connection: ConnectionInfo(id: 1, peer: "127.0.0.1:9"),
            receivedAt: Self.receivedAt,
            http2: PushNotification.HTTP2Fields(
                apnsID: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", topic: Self.bundle + ".push-type.liveactivity",
                pushType: .liveactivity, collapseID: nil, providerToken: nil))
    }

    private func findings(_ aps: String, app: AppBundle? = nil) -> [LintFinding] {
        PushLint.findings(for: push(aps), app: app ?? self.app)
    }

    private func rules(_ aps: String, app: AppBundle? = nil) -> [String] {
        findings(aps, app: app).map(\.rule.id)
    }

    /// An update at the clock, with `state` as its content state.
    private func update(_ state: String) -> String {
        #""event":"update","timestamp":1800000000,"content-state":\#(state)"#
    }

    /// A date 2 hours ahead, as the phone reads it: seconds since 2001.
    private let eta = 1_800_000_000 + 7200 - 978_307_200

    func testAPushThatDecodesAsDeclaredHasNoFinding() {
        XCTAssertEqual(rules(update(#"{"status":"cooking","eta":\#(eta),"stops":2}"#)), [])
        XCTAssertEqual(
            rules(update(#"{"status":"cooking","eta":\#(eta).5,"courier":null,"stops":2.0,"extra":[1]}"#)), [],
            "a fractional date, a null optional, a whole 2.0 and an undeclared key all decode")
        XCTAssertEqual(
            rules(
                #""event":"start","timestamp":1800000000,"attributes-type":"DeliveryAttributes","#
                    + #""attributes":{"orderID":"A7"},"content-state":{"status":"new","eta":\#(eta),"stops":0},"#
                    + #""alert":{"title":"Order","body":"Cooking"}"#),
            [])
    }

    func testAMissingOrMistypedFieldIsAnErrorNamingTheField() throws {
        let found = findings(update(#"{"status":3,"eta":\#(eta),"courier":"Ann"}"#))
        XCTAssertEqual(found.map(\.rule), [.liveActivityContentMismatch, .liveActivityContentMismatch])
        XCTAssertEqual(found.first?.level, .error)
        XCTAssertTrue(
            found[0].message.hasPrefix("aps.content-state.status is a number, declared string"), found[0].message)
        XCTAssertTrue(
            found[1].message.hasPrefix("aps.content-state.stops is missing (declared integer)"), found[1].message)
        XCTAssertEqual(
            rules(update(#"{"status":"a","eta":"2027-01-15","stops":1}"#)), ["live-activity-content-mismatch"])
        XCTAssertEqual(rules(update(#"{"status":"a","eta":\#(eta),"stops":1.5}"#)), ["live-activity-content-mismatch"])
        XCTAssertEqual(rules(update(#"[1,2]"#)), ["live-activity-content-mismatch"])
        XCTAssertEqual(
            rules(#""event":"update","timestamp":1800000000"#), ["live-activity-content-mismatch"],
            "an update without content-state")
        XCTAssertEqual(rules(#""event":"end","timestamp":1800000000"#), [], "an end may leave content-state out")
    }

    func testAStartIsDecodedWithTheTypeItNamesAndItsAttributes() {
        func start(_ type: String, _ attributes: String) -> String {
            #""event":"start","timestamp":1800000000,"attributes-type":"\#(type)","attributes":\#(attributes),"#
                + #""content-state":{"status":"new","eta":\#(eta),"stops":0},"alert":{"title":"Order"}"#
        }
        let wrongAttributes = findings(start("DeliveryAttributes", #"{"orderID":7}"#))
        XCTAssertEqual(wrongAttributes.map(\.rule), [.liveActivityContentMismatch])
        let message = wrongAttributes[0].message
        XCTAssertTrue(message.hasPrefix("aps.attributes.orderID is a number"), message)
        let undeclared = findings(start("PizzaAttributes", #"{"orderID":"A7"}"#))
        XCTAssertEqual(undeclared.map(\.rule), [.liveActivityContentMismatch])
        XCTAssertTrue(undeclared[0].message.contains(#""PizzaAttributes" is not a type the app declares"#))
        XCTAssertEqual(
            rules(start("PizzaAttributes", "{}"), app: AppBundle()), [], "an app that declares no type is not decoded")
    }

    func testUpdatesAreDecodedWithTheAppsOnlyTypeAndNotWhenItDeclaresSeveral() {
        let wrong = update(#"{"status":1}"#)
        XCTAssertEqual(rules(wrong).count, 3)
        let two = AppBundle(liveActivityTypes: ["DeliveryAttributes": Self.delivery, "Other": LiveActivityType()])
        XCTAssertEqual(rules(wrong, app: two), [], "which of two types an update has, the request alone cannot say")
        XCTAssertEqual(rules(wrong, app: AppBundle(sounds: [])), [])
    }

    /// The rule: a Date within 366 days of the clock when read as seconds since 1970.
    func testADateThatLooksLikeAUnixTimeIsAnErrorNamingTheField() {
        let unixETA = 1_800_000_000 + 7200
        let found = findings(update(#"{"status":"a","eta":\#(unixETA),"stops":1}"#))
        XCTAssertEqual(found.map(\.rule), [.liveActivityUnixDate])
        XCTAssertEqual(found.first?.level, .error)
        XCTAssertTrue(found[0].message.hasPrefix("aps.content-state.eta 1800007200 is a Unix time"), found[0].message)
        let now = Self.receivedAt
        XCTAssertTrue(UnixDateRule.looksLikeUnixTime(1_800_000_000 - 365 * 86_400, now: now), "a year ago")
        XCTAssertTrue(UnixDateRule.looksLikeUnixTime(1_800_000_000 + 366 * 86_400, now: now), "366 days ahead")
        XCTAssertFalse(UnixDateRule.looksLikeUnixTime(1_800_000_000 + 367 * 86_400, now: now))
        XCTAssertFalse(UnixDateRule.looksLikeUnixTime(Double(eta), now: now), "seconds since 2001, as the phone reads")
        XCTAssertFalse(UnixDateRule.looksLikeUnixTime(.infinity, now: now))
        XCTAssertEqual(rules(update(#"{"status":"a","eta":0,"stops":1}"#)), [], "2001 is a date, if an odd one")
    }

    func testALiveActivityPushWithoutAKnownEventIsAnError() {
        let missing = findings(#""timestamp":1800000000,"content-state":{}"#, app: AppBundle())
        XCTAssertEqual(missing.map(\.rule), [.liveActivityEvent])
        XCTAssertEqual(missing.first?.message, "aps.event is missing; the phone ignores the push")
        XCTAssertEqual(
            rules(#""events":"update","timestamp":1800000000,"content-state":{}"#, app: AppBundle()),
            ["live-activity-event", "unknown-aps-key"], "node-apn's misspelt key")
        XCTAssertEqual(rules(#""event":"Update","timestamp":1800000000"#, app: AppBundle()), ["live-activity-event"])
        XCTAssertEqual(rules(#""event":1,"timestamp":1800000000"#, app: AppBundle()), ["live-activity-event"])
    }

    func testAStartWithAnEmptyAlertIsAWarning() {
        let start =
            #""event":"start","timestamp":1800000000,"attributes-type":"DeliveryAttributes","#
            + #""attributes":{"orderID":"A7"},"content-state":{"status":"new","eta":\#(eta),"stops":0},"#
        let empty = findings(start + #""alert":{}"#)
        XCTAssertEqual(empty.map(\.rule), [.liveActivityStartEmptyAlert])
        XCTAssertEqual(empty.first?.level, .warning)
        XCTAssertEqual(rules(start + #""alert":{"title":"","body":""}"#), ["live-activity-start-empty-alert"])
        XCTAssertEqual(rules(start + #""alert":{"body":{"loc-key":"COOKING"}}"#), [])
    }

    // MARK: - Declarations' bounds

    func testDeclarationsAreBoundedWhereTheyEnter() {
        let catalog = AppCatalog()
        var fields: [String: LiveActivityType.Field] = [:]
        for index in 0...LiveActivityType.maximumFields { fields["f\(index)"] = .string }
        let wide = AppBundle(liveActivityTypes: ["T": LiveActivityType(contentState: fields)])
        XCTAssertThrowsError(try catalog.describe(Self.bundle, as: wide)) { error in
            XCTAssertEqual(
                error as? AppCatalogError,
                .tooManyNames(
                    bundleID: Self.bundle, part: .liveActivityFields, count: LiveActivityType.maximumFields + 1,
                    limit: LiveActivityType.maximumFields))
        }
        var types: [String: LiveActivityType] = [:]
        for index in 0...LiveActivityType.maximumTypesPerApp { types["T\(index)"] = LiveActivityType() }
        XCTAssertThrowsError(try catalog.describe(Self.bundle, as: AppBundle(liveActivityTypes: types)))
        let long = String(repeating: "x", count: AppBundle.maximumNameLength + 1)
        XCTAssertThrowsError(
            try catalog.describe(Self.bundle, as: AppBundle(liveActivityTypes: [long: LiveActivityType()])))
        XCTAssertThrowsError(
            try catalog.describe(
                Self.bundle, as: AppBundle(liveActivityTypes: ["T": LiveActivityType(attributes: [long: .date])])))
        XCTAssertTrue(catalog.isEmpty, "a refused description leaves the catalog unchanged")
        XCTAssertNoThrow(try catalog.describe(Self.bundle, as: app))
    }

    func testAFieldIsDeclaredByItsKindWithAQuestionMarkWhenOptional() {
        XCTAssertEqual(LiveActivityType.Field(declaration: "date"), .date)
        XCTAssertEqual(LiveActivityType.Field(declaration: "string?"), .string.optional)
        XCTAssertEqual(LiveActivityType.Field.integer.optional.description, "integer?")
        XCTAssertNil(LiveActivityType.Field(declaration: "Date"))
        XCTAssertNil(LiveActivityType.Field(declaration: "string??"))
    }
}
