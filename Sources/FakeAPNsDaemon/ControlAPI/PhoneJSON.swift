import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The device model's shapes in the daemon's JSON, read and written in one place: the clock,
// a phone's settings (the body of `PATCH /api/v1/devices/<token>` and of a `--devices` line),
// its delivery log, screen and deliveries, an app's bundle (`PUT /api/v1/apps/<bundle>` and an
// `app` line of `--devices`), and lint findings.

// MARK: - Reading

/// A change to a phone's settings, as a `PATCH /api/v1/devices/<token>` body (or a `--devices`
/// line's object) says it: only the members given change.
struct PhoneSettingsChange: Sendable, Equatable {
    /// The true-or-false settings given, by their JSON name.
    var switches: [String: Bool] = [:]
    /// The counts given, by their JSON name.
    var counts: [String: Int] = [:]
    /// `backgroundPushesPerDay`: absent (nil), or a count or no budget (`.some(nil)`).
    var backgroundPushesPerDay: Int??
    var storage: DeviceSettings.StorageChoice?
    var expirationGrace: Duration?
    /// The apps' changes, by bundle ID.
    var apps: [String: AppSettingsChange] = [:]

    /// The settings with the change made.
    func applied(to settings: DeviceSettings) -> DeviceSettings {
        var settings = settings
        for (name, path) in PhoneJSON.switches { if let value = switches[name] { settings[keyPath: path] = value } }
        for (name, path) in PhoneJSON.counts { if let value = counts[name] { settings[keyPath: path] = value } }
        if let backgroundPushesPerDay { settings.backgroundPushesPerDay = backgroundPushesPerDay }
        if let storage { settings.storage = storage }
        if let expirationGrace { settings.expirationGrace = expirationGrace }
        for (bundleID, change) in apps { change.apply(to: &settings[app: bundleID]) }
        return settings
    }
}

/// A change to one app's settings on one phone.
struct AppSettingsChange: Sendable, Equatable {
    var isInstalled: Bool?
    var authorization: AppSettings.Authorization?
    var state: AppSettings.AppState?
    var foregroundPresentation: Set<AppSettings.Presentation>?

    func apply(to app: inout AppSettings) {
        if let isInstalled { app.isInstalled = isInstalled }
        if let authorization { app.authorization = authorization }
        if let state { app.state = state }
        if let foregroundPresentation { app.foregroundPresentation = foregroundPresentation }
    }
}

/// How a `POST /api/v1/clock` moves the clock.
enum ClockMove: Sendable, Equatable {
    case advance(Duration)
    case set(Date)
    case real
}

extension PhoneSettingsChange {
    /// Reads a phone's settings object strictly: known members only, each of its type.
    init(_ fields: BodyFields) throws {
        for name in PhoneJSON.switches.map(\.name) {
            if let value = try fields.bool(name) { switches[name] = value }
        }
        for name in PhoneJSON.counts.map(\.name) {
            if let value = try fields.integer(name, in: 0...PhoneJSON.maximumCount, meaning: "pushes an hour") {
                counts[name] = value
            }
        }
        if let value = fields.object["backgroundPushesPerDay"] {
            backgroundPushesPerDay = value == .null
                ? .some(nil)
                : try fields.integer("backgroundPushesPerDay", in: 0...PhoneJSON.maximumCount, meaning: "pushes a day; null: no daily budget")
        }
        if let value = fields.value("storage") {
            storage = try Self.storage(value, fields)
        }
        if let seconds = try fields.number("expirationGrace", in: 0...PhoneJSON.maximumSeconds, meaning: "seconds") {
            expirationGrace = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        if let value = fields.value("apps") {
            guard let object = value.objectValue else { throw fields.wrongType("apps", "an object of apps by bundle ID", value) }
            let apps = try BodyFields(checking: object, allowed: object.keys.map { $0 }, path: fields.path + "apps.")
            for (bundleID, app) in object {
                guard !bundleID.isEmpty else { throw fields.invalid("apps", "names an app with an empty bundle ID") }
                guard let members = app.objectValue else { throw apps.wrongType(bundleID, "an object", app) }
                self.apps[bundleID] = try AppSettingsChange(BodyFields(
                    checking: members, allowed: PhoneJSON.appSettingKeys, path: apps.path + bundleID + "."))
            }
        }
    }

    /// `"latest"` or `{"seed":n}`.
    private static func storage(_ value: JSONValue, _ fields: BodyFields) throws -> DeviceSettings.StorageChoice {
        let expected = #""latest" or {"seed":<integer>}"#
        if let text = value.stringValue {
            guard text == "latest" else { throw fields.invalid("storage", "must be \(expected), not \(shown(text))") }
            return .latest
        }
        guard let object = value.objectValue else { throw fields.wrongType("storage", expected, value) }
        let seed = try BodyFields(checking: object, allowed: ["seed"], path: fields.path + "storage.")
        return .seededRandom(UInt64(try seed.required("seed", seed.integer("seed", in: 0...Int.max, meaning: "the generator's seed"))))
    }
}

extension AppSettingsChange {
    init(_ fields: BodyFields) throws {
        isInstalled = try fields.bool("installed")
        authorization = try fields.keyword("authorization", AppSettings.Authorization.self)
        state = try fields.keyword("state", AppSettings.AppState.self)
        if let value = fields.value("foregroundPresentation") {
            let choices = AppSettings.Presentation.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            guard let items = value.arrayValue else {
                throw fields.wrongType("foregroundPresentation", "an array of \(choices)", value)
            }
            foregroundPresentation = try Set(items.map { item in
                guard let presentation = item.stringValue.flatMap(AppSettings.Presentation.init(rawValue:)) else {
                    throw fields.invalid("foregroundPresentation", "holds \(item.serialized().prefix(64)); each must be one of \(choices)")
                }
                return presentation
            })
        }
    }
}

extension AppBundle {
    /// Reads an app's bundle strictly: `categories`, `sounds`, `entitlements`, each an array of
    /// strings, and a website's `websiteURLFormat`, a string; each optional (absent: not
    /// described).
    init(_ fields: BodyFields) throws {
        func strings(_ name: String) throws -> Set<String>? {
            guard let value = fields.value(name) else { return nil }
            let texts = value.arrayValue?.compactMap(\.stringValue)
            guard let texts, texts.count == value.arrayValue?.count else {
                throw fields.wrongType(name, "an array of strings", value)
            }
            return Set(texts)
        }
        let entitlements = try strings("entitlements").map { names in
            try Set(names.map { name in
                guard let entitlement = Entitlement(rawValue: name) else {
                    let known = Entitlement.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                    throw fields.invalid("entitlements", "holds \(shown(name)); each must be one of \(known)")
                }
                return entitlement
            })
        }
        self.init(
            categories: try strings("categories"), sounds: try strings("sounds"), entitlements: entitlements,
            liveActivityTypes: try Self.liveActivityTypes(fields), websiteURLFormat: try fields.string("websiteURLFormat"))
    }

    /// `liveActivityTypes`: `{"<attributes-type>":{"attributes":{…},"contentState":{…}}}`, each
    /// field's JSON type a kind (`string`, `number`, `integer`, `boolean`, `date`, `object`,
    /// `array`), `?` after it when optional.
    private static func liveActivityTypes(_ fields: BodyFields) throws -> [String: LiveActivityType]? {
        guard let value = fields.value("liveActivityTypes") else { return nil }
        guard let object = value.objectValue else {
            throw fields.wrongType("liveActivityTypes", "an object of types by attributes-type name", value)
        }
        let types = try BodyFields(checking: object, allowed: object.keys.map { $0 }, path: "liveActivityTypes.")
        var declared: [String: LiveActivityType] = [:]
        for (name, member) in object {
            guard !name.isEmpty else { throw fields.invalid("liveActivityTypes", "names a type with an empty name") }
            guard let members = member.objectValue else { throw types.wrongType(name, "an object", member) }
            let type = try BodyFields(
                checking: members, allowed: ["attributes", "contentState"], path: types.path + name + ".")
            func declarations(_ part: String) throws -> [String: LiveActivityType.Field] {
                guard let value = type.value(part) else { return [:] }
                guard let object = value.objectValue else {
                    throw type.wrongType(part, "an object of JSON types by field", value)
                }
                let checked = try BodyFields(
                    checking: object, allowed: object.keys.map { $0 }, path: type.path + part + ".")
                var fields: [String: LiveActivityType.Field] = [:]
                for (key, declaration) in object {
                    guard let field = declaration.stringValue.flatMap(LiveActivityType.Field.init(declaration:)) else {
                        let kinds = LiveActivityType.Kind.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
                        throw checked.invalid(key, "must be one of \(kinds), with \"?\" after it when optional")
                    }
                    fields[key] = field
                }
                return fields
            }
            declared[name] = LiveActivityType(
                attributes: try declarations("attributes"), contentState: try declarations("contentState"))
        }
        return declared
    }
}

extension ClockMove {
    /// One of `{"advance":<seconds>}`, `{"set":<UNIX seconds>}`, `{"real":true}`.
    init(_ fields: BodyFields) throws {
        let given = fields.object.keys.map { $0 }
        guard given.count == 1 else {
            throw ControlError.badRequest(
                given.isEmpty ? "missing_field" : "invalid_value",
                #"the body must hold exactly one of "advance" (seconds), "set" (UNIX seconds) or "real" (true)"#)
        }
        if let seconds = try fields.number("advance", in: 0...PhoneJSON.maximumSeconds, meaning: "seconds") {
            self = .advance(.milliseconds(Int64((seconds * 1000).rounded())))
        } else if let unix = try fields.number("set", in: 0...PhoneJSON.maximumUnixSeconds, meaning: "UNIX seconds") {
            self = .set(Date(timeIntervalSince1970: unix))
        } else if let real = try fields.bool("real") {
            guard real else { throw fields.invalid("real", "must be true (false would mean nothing)") }
            self = .real
        } else {
            throw ControlError.badRequest("invalid_value", #"the clock's field must not be null"#)
        }
    }
}

extension BodyFields {
    /// A string that must be one of an enumeration's raw values.
    func keyword<Keyword: RawRepresentable & CaseIterable>(_ name: String, _ type: Keyword.Type) throws -> Keyword?
    where Keyword.RawValue == String {
        guard let text = try string(name) else { return nil }
        guard let keyword = Keyword(rawValue: text) else {
            let known = Keyword.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw invalid(name, "must be one of \(known), not \(shown(text))")
        }
        return keyword
    }
}

// MARK: - Writing

/// How the control API (and the event log) writes the device model.
enum PhoneJSON {
    /// The true-or-false settings, in the order the settings object lists them.
    static let switches: [(name: String, path: any WritableKeyPath<DeviceSettings, Bool> & Sendable)] = [
        ("online", \.isOnline), ("powerRestricted", \.isPowerRestricted), ("awake", \.isAwake),
        ("lowPowerMode", \.isLowPowerMode), ("backgroundAppRefresh", \.backgroundAppRefresh),
        ("debuggerAttached", \.isDebuggerAttached), ("frequentLiveActivityUpdates", \.frequentLiveActivityUpdates),
        ("replacementPresentsAgain", \.replacementPresentsAgain),
    ]
    /// The budgets counted per hour.
    static let counts: [(name: String, path: any WritableKeyPath<DeviceSettings, Int> & Sendable)] = [
        ("backgroundPushesPerHour", \.backgroundPushesPerHour), ("liveActivityUpdatesPerHour", \.liveActivityUpdatesPerHour),
    ]
    /// Every member of a settings object, in the order it is written.
    static let settingKeys = [
        "online", "powerRestricted", "awake", "lowPowerMode", "backgroundAppRefresh", "debuggerAttached",
        "backgroundPushesPerHour", "backgroundPushesPerDay", "liveActivityUpdatesPerHour", "frequentLiveActivityUpdates",
        "storage", "expirationGrace", "replacementPresentsAgain", "apps",
    ]
    /// Every member of an app's settings object.
    static let appSettingKeys = ["installed", "authorization", "state", "foregroundPresentation"]
    /// Every member of an app's bundle object.
    static let appBundleKeys = ["categories", "sounds", "entitlements", "liveActivityTypes", "websiteURLFormat"]

    /// The largest budget taken.
    static let maximumCount = 1_000_000
    /// The longest clock step or grace taken: 100 years.
    static let maximumSeconds = 100 * 366 * 86_400.0
    /// The latest time the clock is set to: the year 9999.
    static let maximumUnixSeconds = 253_402_300_799.0

    /// `{"now":"<RFC 3339>","unix":1700000000,"manual":true}`
    static func clock(_ clock: ServerClock) -> JSONValue {
        let now = clock.currentDate
        return .object(JSONObject([
            ("now", .string(Timestamp.rfc3339(now))), ("unix", ControlJSON.seconds(now)), ("manual", .bool(clock.isManual)),
        ]))
    }

    /// `{"token":…,"settings":{…},"screen":{…}}`, after the registry's members when registered
    /// (`topic`, `environment`, `unregisteredAt`, null when not) and `registered`.
    static func device(_ phone: Phone, registered: DeviceRegistry.Device?) -> JSONValue {
        var members: [JSONObject.Element] = [(key: "token", value: .string(phone.token.hex))]
        if let object = registered.map(ControlJSON.device)?.objectValue {
            members += object.filter { $0.key != "token" }
        } else {
            members += [(key: "topic", value: .null), (key: "environment", value: .null), (key: "unregisteredAt", value: .null)]
        }
        members += [
            (key: "registered", value: .bool(registered != nil)),
            (key: "settings", value: settings(phone.settings)),
            (key: "screen", value: screen(phone.screen)),
        ]
        return .object(JSONObject(members))
    }

    /// Every setting, by the names a `PATCH` takes.
    static func settings(_ settings: DeviceSettings) -> JSONValue {
        var members: [JSONObject.Element] = switches.map { (key: $0.name, value: .bool(settings[keyPath: $0.path])) }
        members += counts.map { (key: $0.name, value: .int(settings[keyPath: $0.path])) }
        let storage: JSONValue = switch settings.storage {
        case .latest: "latest"
        case .seededRandom(let seed): ["seed": Int(exactly: seed).map { .int($0) } ?? .double(Double(seed))]
        }
        members += [
            (key: "backgroundPushesPerDay", value: settings.backgroundPushesPerDay.map { .int($0) } ?? .null),
            (key: "storage", value: storage),
            (key: "expirationGrace", value: seconds(settings.expirationGrace)),
            (key: "apps", value: .object(JSONObject(settings.apps.sorted { $0.key < $1.key }.map { bundleID, app in
                (key: bundleID, value: .object(JSONObject([
                    ("installed", .bool(app.isInstalled)),
                    ("authorization", .string(app.authorization.rawValue)),
                    ("state", .string(app.state.rawValue)),
                    ("foregroundPresentation", .array(AppSettings.Presentation.allCases
                        .filter(app.foregroundPresentation.contains).map { .string($0.rawValue) })),
                ])))
            }))),
        ]
        let order = Dictionary(uniqueKeysWithValues: settingKeys.enumerated().map { ($1, $0) })
        return .object(JSONObject(members.sorted { order[$0.key, default: 0] < order[$1.key, default: 0] }))
    }

    /// `{"entries":[…]}`
    static func log(_ entries: [DeliveryLogEntry]) -> JSONValue {
        ["entries": .array(entries.map { .object(JSONObject(logMembers($0))) })]
    }

    /// A log entry's members, in the order the API and the event log write them.
    static func logMembers(_ entry: DeliveryLogEntry) -> [JSONObject.Element] {
        [
            (key: "status", value: .string(entry.status.rawValue)),
            (key: "at", value: .string(Timestamp.rfc3339(entry.at))),
            (key: "token", value: .string(entry.deviceToken.hex)),
            (key: "topic", value: string(entry.topic)),
            (key: "apnsID", value: string(entry.apnsID)),
            (key: "uniqueID", value: string(entry.uniqueID)),
            (key: "sequence", value: .int(Int(truncatingIfNeeded: entry.sequenceNumber))),
            (key: "channel", value: string(entry.channelID)),
            (key: "detail", value: string(entry.detail)),
        ]
    }

    static func screen(_ screen: Screen) -> JSONValue {
        .object(JSONObject([
            ("notificationCenter", .array(screen.notificationCenter.map { entry in
                .object(JSONObject([
                    ("identifier", .string(entry.identifier)), ("bundle", string(entry.bundleID)),
                    ("apnsID", string(entry.apnsID)), ("title", string(entry.title)), ("subtitle", string(entry.subtitle)),
                    ("body", string(entry.body)), ("threadID", string(entry.threadID)), ("category", string(entry.category)),
                    ("showsActions", .bool(entry.showsActions)), ("sound", string(entry.sound)),
                    ("interruptionLevel", string(entry.interruptionLevel)), ("presented", .bool(entry.presented)),
                    ("serviceExtensionRan", .bool(entry.serviceExtensionRan)),
                    ("replaced", .array(entry.replaced.map { .string($0) })),
                    ("deliveredAt", .string(Timestamp.rfc3339(entry.deliveredAt))),
                ]))
            })),
            ("badges", .object(JSONObject(screen.badges.sorted { $0.key < $1.key }.map { (key: $0.key, value: .int($0.value)) }))),
            ("wakes", .array(screen.wakes.map { wake in
                .object(JSONObject([
                    ("bundle", .string(wake.bundleID)), ("apnsID", string(wake.apnsID)),
                    ("at", .string(Timestamp.rfc3339(wake.at))),
                ]))
            })),
            ("liveActivities", .array(screen.liveActivities.map { activity in
                .object(JSONObject([
                    ("key", .string(activity.key)), ("bundle", .string(activity.bundleID)),
                    ("state", .string(activity.state.rawValue)),
                    ("contentState", activity.contentState.map { (try? JSONValue(parsing: $0)) ?? .string($0) } ?? .null),
                    ("timestamp", date(activity.timestamp)), ("staleDate", date(activity.staleDate)),
                    ("dismissalDate", date(activity.dismissalDate)),
                ]))
            })),
        ]))
    }

    /// `{"notification":{…},"token":…,"deliveredAt":…,"fromStorage":false,"channel":…}`
    static func delivery(_ delivery: DeviceDelivery) -> JSONValue {
        .object(JSONObject([
            ("notification", delivery.notification.jsonObject),
            ("token", .string(delivery.deviceToken.hex)),
            ("deliveredAt", .string(Timestamp.rfc3339(delivery.deliveredAt))),
            ("fromStorage", .bool(delivery.fromStorage)),
            ("channel", string(delivery.channelID)),
        ]))
    }

    /// `{"bundle":…,"categories":[…]|null,"sounds":[…]|null,"entitlements":[…]|null,`
    /// `"liveActivityTypes":{…}|null,"websiteURLFormat":…|null}` (null: not described).
    static func app(_ bundleID: String, _ bundle: AppBundle?) -> JSONValue {
        func sorted(_ names: Set<String>?) -> JSONValue { names.map { .array($0.sorted().map { .string($0) }) } ?? .null }
        return .object(JSONObject([
            ("bundle", .string(bundleID)),
            ("described", .bool(bundle != nil)),
            ("categories", sorted(bundle?.categories)),
            ("sounds", sorted(bundle?.sounds)),
            ("entitlements", sorted(bundle?.entitlements.map { Set($0.map(\.rawValue)) })),
            ("liveActivityTypes", bundle?.liveActivityTypes.map(liveActivityTypes) ?? .null),
            ("websiteURLFormat", bundle?.websiteURLFormat.map { .string($0) } ?? .null),
        ]))
    }

    /// `{"<attributes-type>":{"attributes":{"<field>":"<kind>[?]"},"contentState":{…}}}`, by name.
    private static func liveActivityTypes(_ types: [String: LiveActivityType]) -> JSONValue {
        func fields(_ fields: [String: LiveActivityType.Field]) -> JSONValue {
            .object(JSONObject(fields.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value.description)) }))
        }
        return .object(JSONObject(types.sorted { $0.key < $1.key }.map { name, type in
            let members: [(String, JSONValue)] = [
                ("attributes", fields(type.attributes)), ("contentState", fields(type.contentState)),
            ]
            return (name, .object(JSONObject(members)))
        }))
    }

    /// `[{"rule":"background-priority-10","level":"error","message":"…","source":"…"}]`
    static func lint(_ findings: [LintFinding]) -> JSONValue {
        .array(findings.map { finding in
            .object(JSONObject([
                ("rule", .string(finding.rule.id)), ("level", .string(finding.level.rawValue)),
                ("message", .string(finding.message)), ("source", .string(finding.source)),
            ]))
        })
    }

    private static func string(_ text: String?) -> JSONValue { text.map { .string($0) } ?? .null }

    private static func date(_ date: Date?) -> JSONValue { date.map { .string(Timestamp.rfc3339($0)) } ?? .null }

    /// A duration in seconds: an integer when whole.
    static func seconds(_ duration: Duration) -> JSONValue {
        let (whole, attoseconds) = duration.components
        if attoseconds == 0 { return .int(Int(whole)) }
        return .double(Double(whole) + Double(attoseconds) / 1e18)
    }
}
