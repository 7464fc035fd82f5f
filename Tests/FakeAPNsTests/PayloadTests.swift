import Dispatch
import Foundation
import Synchronization
import XCTest

// Reads internals on purpose: Payload.isParsed and parseCount, to prove the payload is parsed lazily and once.
@testable import FakeAPNs

final class PayloadTests: XCTestCase {
    // MARK: - Alert

    func testAlertStringIsTheBody() throws {
        let alert = try XCTUnwrap(Payload(#"{"aps":{"alert":"Hello"}}"#).aps.alert)
        XCTAssertTrue(alert.isPlainString)
        XCTAssertEqual(alert.body, "Hello")
        XCTAssertEqual(alert.bodyValue, "Hello")
        XCTAssertNil(alert.title)
        XCTAssertNil(alert["body"])
    }

    func testAlertDictionaryGivesTitleSubtitleAndBody() throws {
        let payload = Payload(#"{"aps":{"alert":{"title":"Game","subtitle":"Final","body":"You won"}}}"#)
        let alert = try XCTUnwrap(payload.aps.alert)
        XCTAssertFalse(alert.isPlainString)
        XCTAssertEqual(alert.title, "Game")
        XCTAssertEqual(alert.subtitle, "Final")
        XCTAssertEqual(alert.body, "You won")
        XCTAssertEqual(alert.titleValue, "Game")
        XCTAssertEqual(alert.subtitleValue, "Final")
        XCTAssertEqual(alert.raw, ["title": "Game", "subtitle": "Final", "body": "You won"])
    }

    func testAlertDictionaryGivesLocalizationKeysAndArguments() throws {
        let payload = Payload(
            """
            {"aps":{"alert":{"title-loc-key":"T","title-loc-args":["a","b"],"subtitle-loc-key":"S",
            "subtitle-loc-args":["c"],"loc-key":"B","loc-args":["d","e"],"launch-image":"launch.png",
            "action-loc-key":"OPEN","action":"View"}}}
            """
        )
        let alert = try XCTUnwrap(payload.aps.alert)
        XCTAssertEqual(alert.titleLocKey, "T")
        XCTAssertEqual(alert.titleLocArgs, ["a", "b"])
        XCTAssertEqual(alert.subtitleLocKey, "S")
        XCTAssertEqual(alert.subtitleLocArgs, ["c"])
        XCTAssertEqual(alert.locKey, "B")
        XCTAssertEqual(alert.locArgs, ["d", "e"])
        XCTAssertEqual(alert.launchImage, "launch.png")
        XCTAssertEqual(alert.actionLocKey, "OPEN")
        XCTAssertEqual(alert.action, "View")
    }

    func testLocalizationArgumentsThatAreNotAllStringsReadAsNil() throws {
        let alert = try XCTUnwrap(Payload(#"{"aps":{"alert":{"loc-args":["a",1]}}}"#).aps.alert)
        XCTAssertNil(alert.locArgs)
        XCTAssertEqual(alert["loc-args"], ["a", 1])
    }

    func testLiveActivityTitleAndBodyDictionariesAreReadableAsValues() throws {
        let payload = Payload(
            """
            {"aps":{"event":"update","alert":{"title":{"loc-key":"%@ is on an adventure!","loc-args":["Power Panda"]},
            "body":{"loc-key":"%@ found a sword!","loc-args":["Power Panda"]},"sound":"chime.aiff"}}}
            """
        )
        let alert = try XCTUnwrap(payload.aps.alert)
        XCTAssertNil(alert.title)
        XCTAssertNil(alert.body)
        XCTAssertEqual(alert.titleValue, ["loc-key": "%@ is on an adventure!", "loc-args": ["Power Panda"]])
        XCTAssertEqual(alert.bodyValue?["loc-key"], "%@ found a sword!")
        XCTAssertEqual(alert.bodyValue?["loc-args"]?[0], "Power Panda")
    }

    func testSoundInsideLiveActivityAlertIsReadable() throws {
        let alert = try XCTUnwrap(Payload(#"{"aps":{"alert":{"title":"x","sound":"chime.aiff"}}}"#).aps.alert)
        XCTAssertEqual(alert.sound?.name, "chime.aiff")
    }

    func testAlertOfAnotherTypeIsNilButKeptInRaw() {
        let aps = Payload(#"{"aps":{"alert":42}}"#).aps
        XCTAssertNil(aps.alert)
        XCTAssertEqual(aps["alert"], 42)
    }

    // MARK: - Sound

    func testSoundStringIsItsName() throws {
        let sound = try XCTUnwrap(Payload(#"{"aps":{"sound":"default"}}"#).aps.sound)
        XCTAssertTrue(sound.isPlainString)
        XCTAssertEqual(sound.name, "default")
        XCTAssertFalse(sound.critical)
        XCTAssertNil(sound.volume)
    }

    func testCriticalSoundDictionaryGivesNameAndVolume() throws {
        let payload = Payload(#"{"aps":{"sound":{"critical":1,"name":"alarm.caf","volume":0.8}}}"#)
        let sound = try XCTUnwrap(payload.aps.sound)
        XCTAssertFalse(sound.isPlainString)
        XCTAssertTrue(sound.critical)
        XCTAssertEqual(sound.name, "alarm.caf")
        XCTAssertEqual(sound.volume, 0.8)
    }

    func testSoundVolumeWrittenAsIntegerReadsAsDouble() {
        XCTAssertEqual(Payload(#"{"aps":{"sound":{"volume":1}}}"#).aps.sound?.volume, 1.0)
    }

    func testCriticalIsTrueOnlyForTheNumberOne() {
        XCTAssertFalse(Payload(#"{"aps":{"sound":{"critical":true}}}"#).aps.sound?.critical ?? true)
        XCTAssertFalse(Payload(#"{"aps":{"sound":{"critical":0}}}"#).aps.sound?.critical ?? true)
        XCTAssertFalse(Payload(#"{"aps":{"sound":{"name":"a"}}}"#).aps.sound?.critical ?? true)
    }

    // MARK: - Other aps keys

    func testBadgeThreadCategoryAndTargetContent() {
        let aps = Payload(
            #"{"aps":{"badge":0,"thread-id":"chat-1","category":"MESSAGE","target-content-id":"w1"}}"#
        ).aps
        XCTAssertEqual(aps.badge, 0)
        XCTAssertEqual(aps.threadID, "chat-1")
        XCTAssertEqual(aps.category, "MESSAGE")
        XCTAssertEqual(aps.targetContentID, "w1")
    }

    func testBadgeThatIsNotAnIntegerReadsAsNil() {
        XCTAssertNil(Payload(#"{"aps":{"badge":"1"}}"#).aps.badge)
        XCTAssertNil(Payload(#"{"aps":{"badge":1.0}}"#).aps.badge)
    }

    func testContentAvailableIsTrueOnlyForTheNumberOne() {
        XCTAssertTrue(Payload(#"{"aps":{"content-available":1}}"#).aps.contentAvailable)
        XCTAssertFalse(Payload(#"{"aps":{"content-available":0}}"#).aps.contentAvailable)
        XCTAssertFalse(Payload(#"{"aps":{"content-available":true}}"#).aps.contentAvailable)
        XCTAssertFalse(Payload(#"{"aps":{}}"#).aps.contentAvailable)
    }

    func testRawKeepsTheExactContentAvailableValue() {
        XCTAssertEqual(Payload(#"{"aps":{"content-available":true}}"#).aps["content-available"], true)
    }

    func testMutableContentIsTrueOnlyForTheNumberOne() {
        XCTAssertTrue(Payload(#"{"aps":{"mutable-content":1}}"#).aps.mutableContent)
        XCTAssertFalse(Payload(#"{"aps":{"mutable-content":"1"}}"#).aps.mutableContent)
    }

    func testInterruptionLevelReadsDocumentedLevels() {
        XCTAssertEqual(
            Payload(#"{"aps":{"interruption-level":"time-sensitive"}}"#).aps.interruptionLevel, .timeSensitive)
        XCTAssertEqual(Payload(#"{"aps":{"interruption-level":"passive"}}"#).aps.interruptionLevel, .passive)
        XCTAssertEqual(
            APS.InterruptionLevel.documented.map(\.rawValue), ["passive", "active", "time-sensitive", "critical"])
    }

    func testInterruptionLevelKeepsUnknownStrings() throws {
        let level = try XCTUnwrap(Payload(#"{"aps":{"interruption-level":"urgent"}}"#).aps.interruptionLevel)
        XCTAssertEqual(level.rawValue, "urgent")
        XCTAssertEqual(level, "urgent")
        XCTAssertFalse(level.isDocumented)
        XCTAssertTrue(APS.InterruptionLevel.critical.isDocumented)
        XCTAssertEqual(level.description, "urgent")
    }

    func testRelevanceScoreAndFilterCriteria() {
        let aps = Payload(#"{"aps":{"relevance-score":0.75,"filter-criteria":"work"}}"#).aps
        XCTAssertEqual(aps.relevanceScore, 0.75)
        XCTAssertEqual(aps.filterCriteria, "work")
        XCTAssertEqual(Payload(#"{"aps":{"relevance-score":100}}"#).aps.relevanceScore, 100)
    }

    func testLiveActivityKeys() {
        let aps = Payload(
            """
            {"aps":{"timestamp":1700000000,"event":"start","content-state":{"score":"1-0"},
            "stale-date":1700003600,"dismissal-date":1700007200,"attributes-type":"MatchAttributes",
            "attributes":{"team":"A"},"input-push-token":1,"input-push-channel":"ch-1"}}
            """
        ).aps
        XCTAssertEqual(aps.timestamp, 1_700_000_000)
        XCTAssertEqual(aps.event, "start")
        XCTAssertEqual(aps.contentState, ["score": "1-0"])
        XCTAssertEqual(aps.staleDate, 1_700_003_600)
        XCTAssertEqual(aps.dismissalDate, 1_700_007_200)
        XCTAssertEqual(aps.attributesType, "MatchAttributes")
        XCTAssertEqual(aps.attributes, ["team": "A"])
        XCTAssertEqual(aps.inputPushToken, 1)
        XCTAssertEqual(aps.inputPushChannel, "ch-1")
    }

    func testContentChangedIsTrueOnlyForLiteralTrue() {
        XCTAssertTrue(Payload(#"{"aps":{"content-changed":true}}"#).aps.contentChanged)
        XCTAssertFalse(Payload(#"{"aps":{"content-changed":1}}"#).aps.contentChanged)
    }

    func testSafariURLArguments() {
        XCTAssertEqual(Payload(#"{"aps":{"url-args":["boarding","A998"]}}"#).aps.urlArgs, ["boarding", "A998"])
        XCTAssertNil(Payload(#"{"aps":{"url-args":["a",null]}}"#).aps.urlArgs)
    }

    func testSummaryArguments() {
        let aps = Payload(#"{"aps":{"summary-arg":"Anna","summary-arg-count":3}}"#).aps
        XCTAssertEqual(aps.summaryArg, "Anna")
        XCTAssertEqual(aps.summaryArgCount, 3)
    }

    func testEveryDocumentedKeyHasAWorkingAccessor() throws {
        let payload = Payload(
            """
            {"aps":{"alert":"a","badge":1,"sound":"s","thread-id":"t","category":"c","content-available":1,
            "mutable-content":1,"target-content-id":"w","interruption-level":"active","relevance-score":1,
            "filter-criteria":"f","stale-date":1,"content-state":{},"timestamp":1,"event":"end",
            "dismissal-date":1,"attributes-type":"T","attributes":{},"input-push-token":1,
            "input-push-channel":"p","content-changed":true,"url-args":[],"summary-arg":"x","summary-arg-count":1}}
            """
        )
        let aps = payload.aps
        XCTAssertEqual(aps.raw.keys, APS.documentedKeys)
        let readings: [Any?] = [
            aps.alert, aps.badge, aps.sound, aps.threadID, aps.category, aps.contentAvailable ? 1 : nil,
            aps.mutableContent ? 1 : nil, aps.targetContentID, aps.interruptionLevel, aps.relevanceScore,
            aps.filterCriteria, aps.staleDate, aps.contentState, aps.timestamp, aps.event, aps.dismissalDate,
            aps.attributesType, aps.attributes, aps.inputPushToken, aps.inputPushChannel,
            aps.contentChanged ? 1 : nil, aps.urlArgs, aps.summaryArg, aps.summaryArgCount,
        ]
        for (key, reading) in zip(APS.documentedKeys, readings) {
            XCTAssertNotNil(reading, "accessor for \(key)")
        }
    }

    // MARK: - Top level

    func testCustomKeysAreEveryTopLevelKeyExceptAPSInOrder() {
        let payload = Payload(#"{"z":1,"aps":{"badge":1},"a":{"deep":true}}"#)
        XCTAssertEqual(payload.customKeys.keys, ["z", "a"])
        XCTAssertEqual(payload.customKeys["a"], ["deep": true])
        XCTAssertNil(payload.customKeys["aps"])
    }

    func testTopLevelSubscriptReadsAnyKeyIncludingAPS() {
        let payload = Payload(#"{"aps":{"badge":1},"id":"x"}"#)
        XCTAssertEqual(payload["id"], "x")
        XCTAssertEqual(payload["aps"], ["badge": 1])
        XCTAssertNil(payload["missing"])
    }

    func testPayloadWithoutAPSHasAnEmptyAPS() {
        let payload = Payload(#"{"mdm":"00000000-1111-2222-3333-444455556666"}"#)
        XCTAssertNil(payload.parseError)
        XCTAssertTrue(payload.aps.raw.isEmpty)
        XCTAssertEqual(payload.aps, APS())
        XCTAssertEqual(payload.customKeys.keys, ["mdm"])
    }

    func testAPSThatIsNotADictionaryReadsAsEmpty() {
        let payload = Payload(#"{"aps":"alert"}"#)
        XCTAssertTrue(payload.aps.raw.isEmpty)
        XCTAssertEqual(payload["aps"], "alert")
    }

    func testDuplicateKeysStayVisibleForALinter() {
        let payload = Payload(#"{"aps":{"badge":1,"badge":2},"a":1,"aps":{},"a":2}"#)
        XCTAssertEqual(payload.json?.objectValue?.duplicateKeys, ["aps", "a"])
        XCTAssertEqual(payload.aps.badge, 1)
        XCTAssertEqual(payload.aps.raw.duplicateKeys, ["badge"])
        XCTAssertEqual(payload.customKeys.duplicateKeys, ["a"])
    }

    // MARK: - Invalid payloads

    func testInvalidJSONPayloadKeepsItsBytesAndReportsTheError() throws {
        let payload = Payload(#"{"aps":{"alert":"x",}}"#)
        XCTAssertNil(payload.json)
        let error = try XCTUnwrap(payload.parseError)
        XCTAssertEqual(error.offset, 19)
        XCTAssertEqual(error.message, "trailing comma in object at byte 19")
        XCTAssertEqual(payload.text, #"{"aps":{"alert":"x",}}"#)
        XCTAssertTrue(payload.aps.raw.isEmpty)
        XCTAssertTrue(payload.customKeys.isEmpty)
        XCTAssertNil(payload["aps"])
    }

    func testNonUTF8PayloadHasNoTextAndAParseError() {
        let payload = Payload(bytes: [0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D])
        XCTAssertNil(payload.text)
        XCTAssertEqual(payload.parseError?.offset, 2)
        XCTAssertEqual(payload.bytes.count, 7)
        XCTAssertEqual(payload.description, "<7 bytes, not UTF-8>")
    }

    func testTopLevelArrayIsValidJSONButAParseError() {
        let payload = Payload("  [1,2]")
        XCTAssertEqual(payload.json, [1, 2])
        XCTAssertEqual(payload.parseError?.message, "payload must be a JSON object, found an array at byte 2")
        XCTAssertEqual(payload.parseError?.offset, 2)
        XCTAssertTrue(payload.aps.raw.isEmpty)
        XCTAssertTrue(payload.customKeys.isEmpty)
    }

    func testTopLevelScalarsAreParseErrorsNamingTheirKind() {
        XCTAssertEqual(
            Payload(#""aps""#).parseError?.message, "payload must be a JSON object, found a string at byte 0")
        XCTAssertEqual(Payload("3").parseError?.message, "payload must be a JSON object, found a number at byte 0")
        XCTAssertEqual(Payload("null").parseError?.message, "payload must be a JSON object, found null at byte 0")
        XCTAssertEqual(Payload("true").parseError?.message, "payload must be a JSON object, found a boolean at byte 0")
    }

    func testEmptyPayloadReportsThatAValueWasExpected() {
        XCTAssertEqual(Payload("").parseError?.message, "expected a JSON value, but the input ended at byte 0")
    }

    func testWellFormedPayloadHasNoParseError() {
        XCTAssertNil(Payload(#"{"aps":{}}"#).parseError)
    }

    // MARK: - Lazy parsing

    func testCreatingAPayloadDoesNotParseIt() {
        let payload = Payload(#"{"aps":{"badge":1}}"#)
        _ = payload.bytes
        _ = payload.text
        XCTAssertFalse(payload.isParsed)
        XCTAssertEqual(payload.parseCount, 0)
    }

    func testReadingAnyParsedPropertyParsesOnceForAllCopies() {
        let payload = Payload(#"{"aps":{"badge":1},"x":2}"#)
        let copy = payload
        _ = payload.json
        _ = copy.aps
        _ = payload.customKeys
        _ = copy["x"]
        _ = payload.parseError
        XCTAssertTrue(copy.isParsed)
        XCTAssertEqual(payload.parseCount, 1)
    }

    func testConcurrentFirstAccessParsesOnceAndAllThreadsAgree() {
        let text = #"{"aps":{"alert":{"title":"T","body":"B"},"badge":7},"list":[1,2,3],"id":"\u00e9"}"#
        let expected = Payload(text).json
        let payload = Payload(text)
        let disagreements = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            if index.isMultiple(of: 2) {
                _ = payload.aps
            }
            if payload.json != expected {
                disagreements.add(1, ordering: .relaxed)
            }
        }
        XCTAssertNotNil(expected)
        XCTAssertEqual(disagreements.load(ordering: .relaxed), 0)
        XCTAssertEqual(payload.parseCount, 1)
    }

    // MARK: - Identity and conversions

    func testPayloadsWithEqualBytesAreEqualAndHashAlike() {
        let first = Payload(#"{"aps":{}}"#)
        let second = Payload(bytes: Array(#"{"aps":{}}"#.utf8))
        XCTAssertEqual(first, second)
        XCTAssertEqual(first.hashValue, second.hashValue)
    }

    func testPayloadsWithEqualJSONButDifferentBytesAreNotEqual() {
        let compact = Payload(#"{"aps":{}}"#)
        let spaced = Payload(#"{ "aps": {} }"#)
        XCTAssertEqual(compact.json, spaced.json)
        XCTAssertNotEqual(compact, spaced)
    }

    func testPayloadFromJSONIsItsCompactSerialization() {
        let payload = Payload(json: ["aps": ["content-available": 1], "id": 1.0])
        XCTAssertEqual(payload.text, #"{"aps":{"content-available":1},"id":1.0}"#)
        XCTAssertTrue(payload.aps.contentAvailable)
    }

    func testDataTextAndBytesShowTheSamePayload() {
        let text = #"{"aps":{"alert":"é"}}"#
        let payload = Payload(text)
        XCTAssertEqual(payload.bytes, Array(text.utf8))
        XCTAssertEqual(payload.data, Data(text.utf8))
        XCTAssertEqual(payload.text, text)
        XCTAssertEqual(payload.description, text)
    }

    func testPayloadFromDataReadsTheSameBytes() {
        let data = Data(#"{"aps":{"badge":2}}"#.utf8)
        XCTAssertEqual(Payload(bytes: data).aps.badge, 2)
    }
}
