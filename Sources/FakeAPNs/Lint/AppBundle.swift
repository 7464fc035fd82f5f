/// What an app ships, the same on every phone: the categories it registers, the sounds it
/// bundles, the entitlements it holds and its Live Activity attributes types. The lint's
/// rules that need one (categories, sounds, interruption levels, Live Activity types) stay
/// quiet for an app that was never described.
///
/// ```swift
/// server.apps["com.example.shop"] = AppBundle(categories: ["ORDER"], sounds: ["chime.caf"])
/// ```
public struct AppBundle: Sendable, Hashable {
    /// The notification categories the app registers; nil: not described.
    public var categories: Set<String>?
    /// The sound files the app bundles (`Library/Sounds` included); nil: not described.
    public var sounds: Set<String>?
    /// The entitlements the app holds; nil: not described.
    public var entitlements: Set<Entitlement>?
    /// Its Live Activity attributes types, by the name a push-to-start sends as
    /// `attributes-type` (the Swift type's name); nil: not described, so no Live Activity
    /// push is decoded.
    public var liveActivityTypes: [String: LiveActivityType]?
    /// For a Safari website push ID (`web.…`, described like an app): the `urlFormatString` of
    /// the website's push package, whose `%@` placeholders a push's `url-args` fill, in order;
    /// nil: not described.
    public var websiteURLFormat: String?

    /// An app (or a website); nil leaves a part undescribed.
    public init(
        categories: Set<String>? = nil, sounds: Set<String>? = nil, entitlements: Set<Entitlement>? = nil,
        liveActivityTypes: [String: LiveActivityType]? = nil, websiteURLFormat: String? = nil
    ) {
        self.categories = categories
        self.sounds = sounds
        self.entitlements = entitlements
        self.liveActivityTypes = liveActivityTypes
        self.websiteURLFormat = websiteURLFormat
    }

    /// The placeholder of a website's URL format (Apple: "Use %@ as a placeholder for arguments
    /// you fill in when delivering your notification").
    package static let websiteURLPlaceholder = "%@"

    /// How many `url-args` ``websiteURLFormat`` takes: its placeholders; nil when not described.
    package var websiteURLArgumentCount: Int? {
        websiteURLFormat.map { $0.components(separatedBy: Self.websiteURLPlaceholder).count - 1 }
    }

    /// An entitlement a notification feature needs.
    public enum Entitlement: String, Sendable, Hashable, CaseIterable {
        /// `com.apple.developer.usernotifications.time-sensitive`.
        case timeSensitive = "time-sensitive"
        /// Critical alerts: Apple's entitlement, and the user's authorisation.
        case criticalAlerts = "critical-alerts"
    }

    /// The bundle ID of `topic`: the topic without the suffix of a push type (`.voip`,
    /// `.push-type.liveactivity`, `.location-query` …, ``PushType/topicSuffix``).
    package static func bundleID(of topic: String) -> String {
        guard let suffix = PushType.named(byTopic: topic)?.topicSuffix else { return topic }
        return String(topic.dropLast(suffix.count))
    }

}

// MARK: - Bounds

extension AppBundle {
    /// The most categories one description lists: real apps register a handful, a few dozen
    /// at most.
    public static let maximumCategories = 128
    /// The most sounds one description lists: real apps bundle a few, a few dozen at most.
    public static let maximumSounds = 128
    /// The longest name (a category, a sound, a Live Activity type or field, the bundle ID), in
    /// UTF-8 bytes: a file name's limit on Apple's file systems.
    public static let maximumNameLength = 255
    /// The most bytes one description's names take in all (categories, sounds, Live Activity
    /// types and their fields, in UTF-8):
    /// 8 KiB, several times a large real app's (a hundred names of 40 bytes take 4 KB).
    public static let maximumNameBytes = 8 * 1024
    /// The longest website URL format, in UTF-8 bytes: 2 KiB, a safe length for any URL.
    public static let maximumURLFormatLength = 2048

    /// What a description names, for ``AppCatalogError``.
    public enum Part: String, Sendable, Hashable, CustomStringConvertible {
        /// The bundle ID the description is for.
        case bundleID = "bundle ID"
        /// ``AppBundle/categories``.
        case categories
        /// ``AppBundle/sounds``.
        case sounds
        /// ``AppBundle/liveActivityTypes``: the types' names.
        case liveActivityTypes = "liveActivityTypes"
        /// The fields of one of ``AppBundle/liveActivityTypes``.
        case liveActivityFields = "Live Activity fields"
        /// ``AppBundle/websiteURLFormat``.
        case websiteURLFormat = "website URL format"

        public var description: String { rawValue }
    }

    /// The first bound this description, for `bundleID`, is over; nil when it is within all.
    package func boundsProblem(bundleID: String) -> AppCatalogError? {
        let bundle = Self.bundleID(of: bundleID)
        if bundle.utf8.count > Self.maximumNameLength {
            return .nameTooLong(bundleID: bundle, part: .bundleID, length: bundle.utf8.count, limit: Self.maximumNameLength)
        }
        if let format = websiteURLFormat, format.utf8.count > Self.maximumURLFormatLength {
            let length = format.utf8.count
            return .nameTooLong(
                bundleID: bundle, part: .websiteURLFormat, length: length, limit: Self.maximumURLFormatLength)
        }
        var bytes = 0
        for (part, names, limit) in [(Part.categories, categories, Self.maximumCategories), (.sounds, sounds, Self.maximumSounds)] {
            guard let names else { continue }
            if names.count > limit {
                return .tooManyNames(bundleID: bundle, part: part, count: names.count, limit: limit)
            }
            for name in names {
                let length = name.utf8.count
                if length > Self.maximumNameLength {
                    return .nameTooLong(bundleID: bundle, part: part, length: length, limit: Self.maximumNameLength)
                }
                bytes += length
            }
        }
        if let types = liveActivityTypes {
            let typeLimit = LiveActivityType.maximumTypesPerApp
            if types.count > typeLimit {
                return .tooManyNames(bundleID: bundle, part: .liveActivityTypes, count: types.count, limit: typeLimit)
            }
            for (name, type) in types {
                let fields = type.attributes.count + type.contentState.count
                if fields > LiveActivityType.maximumFields {
                    let limit = LiveActivityType.maximumFields
                    return .tooManyNames(bundleID: bundle, part: .liveActivityFields, count: fields, limit: limit)
                }
                for (part, length) in [(Part.liveActivityTypes, name.utf8.count)]
                    + (type.attributes.keys.map { $0 } + type.contentState.keys.map { $0 }).map({
                        (Part.liveActivityFields, $0.utf8.count)
                    })
                {
                    if length > Self.maximumNameLength {
                        return .nameTooLong(bundleID: bundle, part: part, length: length, limit: Self.maximumNameLength)
                    }
                    bytes += length
                }
            }
        }
        if bytes > Self.maximumNameBytes {
            return .tooLarge(bundleID: bundle, bytes: bytes, limit: Self.maximumNameBytes)
        }
        return nil
    }
}

/// Why the app catalog refused a description: it is over a bound of ``AppBundle`` or
/// ``AppCatalog`` (the limits page lists them).
public enum AppCatalogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// ``AppCatalog/maximumApps`` apps are described, and `bundleID` is not one of them.
    case tooManyApps(bundleID: String, limit: Int)
    /// The description lists `count` names of `part`, over `limit`.
    case tooManyNames(bundleID: String, part: AppBundle.Part, count: Int, limit: Int)
    /// A name of `part` (or the bundle ID itself) is `length` UTF-8 bytes, over `limit`.
    case nameTooLong(bundleID: String, part: AppBundle.Part, length: Int, limit: Int)
    /// The description's names take `bytes` UTF-8 bytes in all, over `limit`.
    case tooLarge(bundleID: String, bytes: Int, limit: Int)

    /// The bundle ID the refused description was for.
    public var bundleID: String {
        switch self {
        case .tooManyApps(let bundleID, _), .tooManyNames(let bundleID, _, _, _), .nameTooLong(let bundleID, _, _, _),
            .tooLarge(let bundleID, _, _):
            bundleID
        }
    }

    /// What went wrong, in words, without the bundle ID.
    public var problem: String {
        switch self {
        case .tooManyApps(_, let limit):
            "\(limit) apps are described already, the most a server keeps; describe fewer, or reset between tests"
        case .tooManyNames(_, .liveActivityFields, let count, let limit):
            "one of its Live Activity types declares \(count) fields; a type declares at most \(limit)"
        case .tooManyNames(_, let part, let count, let limit):
            "the description lists \(count) \(part); an app description lists at most \(limit)"
        case .nameTooLong(_, .bundleID, let length, let limit):
            "the bundle ID is \(length) bytes long; at most \(limit) are allowed"
        case .nameTooLong(_, .websiteURLFormat, let length, let limit):
            "the website URL format is \(length) bytes long; at most \(limit) are allowed"
        case .nameTooLong(_, let part, let length, let limit):
            "one of its \(part) is \(length) bytes long; a name is at most \(limit) bytes"
        case .tooLarge(_, let bytes, let limit):
            "its names take \(bytes) bytes in all; an app description's names take at most \(limit) (8 KiB)"
        }
    }

    /// What went wrong, in words.
    public var description: String {
        "app \(JSONValue.quoted(String(bundleID.prefix(64)))) is not described: \(problem)"
    }
}
