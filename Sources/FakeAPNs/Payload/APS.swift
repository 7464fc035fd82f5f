/// A typed view of a payload's `aps` dictionary: Apple's keys, read without losing what was sent.
///
/// Each accessor reads one key and returns `nil` (or `false` for flags) when the key is missing
/// or has a different JSON type than Apple documents. ``raw`` and the subscript keep the exact
/// values, so a checker can tell "missing" from "wrong type".
///
/// ```swift
/// let aps = Payload(#"{"aps":{"alert":"Hello","badge":1,"sound":"default"}}"#).aps
/// aps.alert?.body       // "Hello"
/// aps.badge             // 1
/// aps.sound?.name       // "default"
/// aps["badge"]          // .int(1)
/// ```
public struct APS: Sendable, Hashable {
    /// The `aps` dictionary as sent.
    public let raw: JSONObject

    /// Creates a view of an `aps` dictionary; empty by default (a payload without `aps`).
    public init(raw: JSONObject = JSONObject()) {
        self.raw = raw
    }

    /// Every key Apple documents for `aps`, in the order of Apple's payload key reference.
    /// Custom keys belong beside `aps`; APNs ignores unknown keys inside it.
    public static let documentedKeys: [String] = [
        "alert", "badge", "sound", "thread-id", "category", "content-available", "mutable-content",
        "target-content-id", "interruption-level", "relevance-score", "filter-criteria", "stale-date",
        "content-state", "timestamp", "event", "dismissal-date", "attributes-type", "attributes",
        "input-push-token", "input-push-channel", "content-changed", "url-args", "summary-arg",
        "summary-arg-count",
    ]

    /// The value for any key, as sent.
    public subscript(key: String) -> JSONValue? {
        raw[key]
    }

    // MARK: Alert notifications

    /// `alert`: a plain string (the body) or a dictionary; `nil` if missing or another type.
    public var alert: Alert? {
        raw["alert"].flatMap(Alert.init)
    }

    /// `badge`: the number to show on the app icon; 0 clears it.
    public var badge: Int? {
        raw["badge"]?.intValue
    }

    /// `sound`: a sound file name (or `"default"`), or a dictionary for critical alerts.
    public var sound: Sound? {
        raw["sound"].flatMap(Sound.init)
    }

    /// `thread-id`: groups notifications in PushNotification Center.
    public var threadID: String? {
        raw["thread-id"]?.stringValue
    }

    /// `category`: the notification category the app registered, which selects its actions.
    public var category: String? {
        raw["category"]?.stringValue
    }

    /// `content-available`: whether this is a background update. True only for the number 1,
    /// as Apple documents; `true` or `"1"` read as false (``raw`` shows what was sent).
    public var contentAvailable: Bool {
        raw["content-available"] == .int(1)
    }

    /// `mutable-content`: whether the notification service extension may modify the
    /// notification. True only for the number 1, as Apple documents.
    public var mutableContent: Bool {
        raw["mutable-content"] == .int(1)
    }

    /// `target-content-id`: the window or content to bring forward when the user opens it.
    public var targetContentID: String? {
        raw["target-content-id"]?.stringValue
    }

    /// `interruption-level`: how urgently the system presents the notification.
    public var interruptionLevel: InterruptionLevel? {
        raw["interruption-level"]?.stringValue.map(InterruptionLevel.init(rawValue:))
    }

    /// `relevance-score`: ranking in the notification summary, 0 to 1 (any number for
    /// Live Activities). Integers such as `1` are read as doubles.
    public var relevanceScore: Double? {
        raw["relevance-score"]?.doubleValue
    }

    /// `filter-criteria`: the Focus filter the notification belongs to.
    public var filterCriteria: String? {
        raw["filter-criteria"]?.stringValue
    }

    // MARK: Live Activities

    /// `stale-date`: when a Live Activity's content becomes outdated, in UNIX seconds.
    public var staleDate: Int? {
        raw["stale-date"]?.intValue
    }

    /// `content-state`: a Live Activity's new content, matching the app's `ContentState`.
    public var contentState: JSONValue? {
        raw["content-state"]
    }

    /// `timestamp`: when a Live Activity update was sent, in UNIX seconds.
    public var timestamp: Int? {
        raw["timestamp"]?.intValue
    }

    /// `event`: the Live Activity action, `"start"`, `"update"` or `"end"`.
    public var event: String? {
        raw["event"]?.stringValue
    }

    /// `dismissal-date`: when an ended Live Activity leaves the Lock Screen, in UNIX seconds.
    public var dismissalDate: Int? {
        raw["dismissal-date"]?.intValue
    }

    /// `attributes-type`: the Live Activity's attributes type name, required with `event: start`.
    public var attributesType: String? {
        raw["attributes-type"]?.stringValue
    }

    /// `attributes`: the static attributes of a Live Activity started by push.
    public var attributes: JSONValue? {
        raw["attributes"]
    }

    /// `input-push-token`: `1` asks a push-started Live Activity for its own push token (iOS 18).
    public var inputPushToken: Int? {
        raw["input-push-token"]?.intValue
    }

    /// `input-push-channel`: the broadcast channel a push-started Live Activity subscribes to.
    public var inputPushChannel: String? {
        raw["input-push-channel"]?.stringValue
    }

    // MARK: Widgets, Safari and older keys

    /// `content-changed`: a widget or control push. True only for the JSON literal `true`.
    public var contentChanged: Bool {
        raw["content-changed"] == .bool(true)
    }

    /// `url-args`: Safari web push URL arguments; `nil` if missing or not all strings.
    public var urlArgs: [String]? {
        raw["url-args"]?.stringArrayValue
    }

    /// `summary-arg`: the older notification summary argument.
    public var summaryArg: String? {
        raw["summary-arg"]?.stringValue
    }

    /// `summary-arg-count`: the older count of items a notification adds to its summary.
    public var summaryArgCount: Int? {
        raw["summary-arg-count"]?.intValue
    }
}

// MARK: - Alert

extension APS {
    /// The `alert` value: a plain string, which is the body, or a dictionary of texts and
    /// localization keys.
    ///
    /// In Apple's Live Activity examples `title` and `body` are dictionaries of
    /// `{"loc-key": ..., "loc-args": [...]}` rather than strings; ``title`` and ``body`` are
    /// `nil` then, and ``titleValue`` and ``bodyValue`` hold the dictionaries.
    ///
    /// ```swift
    /// let alert = APS.Alert(["title": ["loc-key": "RACE", "loc-args": ["Monaco"]], "body": "Go"])!
    /// alert.title                           // nil: not a string
    /// alert.titleValue?["loc-key"]          // .string("RACE")
    /// alert.body                            // "Go"
    /// ```
    public struct Alert: Sendable, Hashable {
        /// The `alert` value as sent: a string or an object.
        public let raw: JSONValue

        /// Every key Apple documents for the `alert` dictionary, plus the older `action-loc-key`
        /// and `action` (Safari) and `sound` (inside Live Activity alerts).
        public static let documentedKeys: [String] = [
            "title", "subtitle", "body", "launch-image", "title-loc-key", "title-loc-args",
            "subtitle-loc-key", "subtitle-loc-args", "loc-key", "loc-args", "action-loc-key", "action",
            "sound",
        ]

        /// Reads an `alert` value; `nil` unless it is a string or an object.
        public init?(_ value: JSONValue) {
            switch value {
            case .string, .object: raw = value
            default: return nil
            }
        }

        /// Whether the alert was sent as a plain string (which is then the ``body``).
        public var isPlainString: Bool {
            if case .string = raw { return true }
            return false
        }

        /// The value for any key of the alert dictionary, as sent; `nil` for a plain string.
        public subscript(key: String) -> JSONValue? {
            raw.objectValue?[key]
        }

        /// `title`, when it is a string.
        public var title: String? {
            self["title"]?.stringValue
        }

        /// `title` as sent: a string, or a `{loc-key, loc-args}` dictionary in Live Activities.
        public var titleValue: JSONValue? {
            self["title"]
        }

        /// `subtitle`, when it is a string.
        public var subtitle: String? {
            self["subtitle"]?.stringValue
        }

        /// `subtitle` as sent.
        public var subtitleValue: JSONValue? {
            self["subtitle"]
        }

        /// The body: the alert itself when it is a plain string, else `body` when it is a string.
        public var body: String? {
            raw.stringValue ?? self["body"]?.stringValue
        }

        /// The body as sent: the plain string, or `body` (a string, or a `{loc-key, loc-args}`
        /// dictionary in Live Activities).
        public var bodyValue: JSONValue? {
            isPlainString ? raw : self["body"]
        }

        /// `launch-image`: the image to show while the app launches from the notification.
        public var launchImage: String? {
            self["launch-image"]?.stringValue
        }

        /// `title-loc-key`: the localization key for the title.
        public var titleLocKey: String? {
            self["title-loc-key"]?.stringValue
        }

        /// `title-loc-args`: arguments for the title's format string; `nil` if not all strings.
        public var titleLocArgs: [String]? {
            self["title-loc-args"]?.stringArrayValue
        }

        /// `subtitle-loc-key`: the localization key for the subtitle.
        public var subtitleLocKey: String? {
            self["subtitle-loc-key"]?.stringValue
        }

        /// `subtitle-loc-args`: arguments for the subtitle's format string; `nil` if not all strings.
        public var subtitleLocArgs: [String]? {
            self["subtitle-loc-args"]?.stringArrayValue
        }

        /// `loc-key`: the localization key for the body.
        public var locKey: String? {
            self["loc-key"]?.stringValue
        }

        /// `loc-args`: arguments for the body's format string; `nil` if not all strings.
        public var locArgs: [String]? {
            self["loc-args"]?.stringArrayValue
        }

        /// `action-loc-key`: the older localization key for the action button's title.
        public var actionLocKey: String? {
            self["action-loc-key"]?.stringValue
        }

        /// `action`: the action button label of a Safari web push.
        public var action: String? {
            self["action"]?.stringValue
        }

        /// `sound` inside the alert, where Live Activity payloads put it.
        public var sound: Sound? {
            self["sound"].flatMap(Sound.init)
        }
    }
}

// MARK: - Sound

extension APS {
    /// The `sound` value: a sound name (or `"default"`), or a dictionary for critical alerts.
    ///
    /// ```swift
    /// let sound = APS.Sound(["critical": 1, "name": "alarm.caf", "volume": 0.8])!
    /// sound.critical   // true
    /// sound.name       // "alarm.caf"
    /// sound.volume     // 0.8
    /// ```
    public struct Sound: Sendable, Hashable {
        /// The `sound` value as sent: a string or an object.
        public let raw: JSONValue

        /// Every key Apple documents for the `sound` dictionary.
        public static let documentedKeys: [String] = ["critical", "name", "volume"]

        /// Reads a `sound` value; `nil` unless it is a string or an object.
        public init?(_ value: JSONValue) {
            switch value {
            case .string, .object: raw = value
            default: return nil
            }
        }

        /// Whether the sound was sent as a plain name rather than a dictionary.
        public var isPlainString: Bool {
            if case .string = raw { return true }
            return false
        }

        /// The sound's name: the plain string, or the dictionary's `name` when it is a string.
        public var name: String? {
            raw.stringValue ?? raw["name"]?.stringValue
        }

        /// `critical`: whether this is a critical alert sound. True only for the number 1, as
        /// Apple documents.
        public var critical: Bool {
            raw["critical"] == .int(1)
        }

        /// `volume`: the critical alert's volume, 0 to 1. Integers such as `1` are read as doubles.
        public var volume: Double? {
            raw["volume"]?.doubleValue
        }
    }
}

// MARK: - InterruptionLevel

extension APS {
    /// The `interruption-level` value: Apple's documented levels, plus any other string a client
    /// sends, so a fake can receive values Apple adds later.
    ///
    /// ```swift
    /// aps.interruptionLevel == .timeSensitive             // "time-sensitive"
    /// APS.InterruptionLevel(rawValue: "urgent").isDocumented   // false
    /// ```
    public struct InterruptionLevel: RawRepresentable, Sendable, Hashable, ExpressibleByStringLiteral,
        CustomStringConvertible
    {
        /// The level exactly as sent.
        public let rawValue: String

        /// Creates a level from any string.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// Creates a level from a string literal.
        public init(stringLiteral value: String) {
            self.init(rawValue: value)
        }

        /// `passive`: added to the list quietly, without lighting the screen or playing a sound.
        public static let passive = InterruptionLevel(rawValue: "passive")
        /// `active`: presented immediately, the default.
        public static let active = InterruptionLevel(rawValue: "active")
        /// `time-sensitive`: presented immediately and may break through Focus.
        public static let timeSensitive = InterruptionLevel(rawValue: "time-sensitive")
        /// `critical`: presented immediately, with sound even when muted; needs an entitlement.
        public static let critical = InterruptionLevel(rawValue: "critical")

        /// The levels Apple documents.
        public static let documented: [InterruptionLevel] = [.passive, .active, .timeSensitive, .critical]

        /// Whether this is one of the levels Apple documents.
        public var isDocumented: Bool {
            Self.documented.contains(self)
        }

        /// The raw value.
        public var description: String {
            rawValue
        }
    }
}

// MARK: - Helpers

extension JSONValue {
    /// The elements as strings, if this is an array of strings only.
    fileprivate var stringArrayValue: [String]? {
        guard let elements = arrayValue else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard let string = element.stringValue else { return nil }
            strings.append(string)
        }
        return strings
    }
}
