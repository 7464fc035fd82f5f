/// The `apns-push-type` of an HTTP/2 request. An extensible set: Apple's types are static
/// members; `isKnown` tells them from others.
public struct PushType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `apns-push-type` value.
    public let rawValue: String
    /// The push type with this value, documented or not.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A visible notification.
    public static let alert = PushType(rawValue: "alert")
    /// A silent update: `content-available` only, priority 5.
    public static let background = PushType(rawValue: "background")
    /// A location query (topic `<bundle>.location-query`).
    public static let location = PushType(rawValue: "location")
    /// A VoIP call (topic `<bundle>.voip`, 5120-byte payloads).
    public static let voip = PushType(rawValue: "voip")
    /// A watchOS complication update (topic `<bundle>.complication`).
    public static let complication = PushType(rawValue: "complication")
    /// A File Provider change (topic `<bundle>.pushkit.fileprovider`).
    public static let fileprovider = PushType(rawValue: "fileprovider")
    /// An MDM wake-up (the MDM certificate's topic).
    public static let mdm = PushType(rawValue: "mdm")
    /// A Live Activity update (topic `<bundle>.push-type.liveactivity`).
    public static let liveactivity = PushType(rawValue: "liveactivity")
    /// A Push to Talk update (topic `<bundle>.voip-ptt`).
    public static let pushtotalk = PushType(rawValue: "pushtotalk")
    /// A widget reload (topic `<bundle>.push-type.widgets`).
    public static let widgets = PushType(rawValue: "widgets")
    /// A control reload (topic `<bundle>.push-type.controls`).
    public static let controls = PushType(rawValue: "controls")

    /// Every push type Apple documents.
    public static let known: [PushType] = [
        .alert, .background, .location, .voip, .complication, .fileprovider, .mdm, .liveactivity, .pushtotalk,
        .widgets, .controls,
    ]

    /// Whether Apple documents this push type.
    public var isKnown: Bool { Self.known.contains(self) }

    /// The suffix the topic must end with for this push type ("" when the bundle ID itself is
    /// the topic; nil for `mdm`, whose topic is the certificate's).
    public var topicSuffix: String? {
        switch rawValue {
        case "location": ".location-query"
        case "voip": ".voip"
        case "complication": ".complication"
        case "fileprovider": ".pushkit.fileprovider"
        case "liveactivity": ".push-type.liveactivity"
        case "pushtotalk": ".voip-ptt"
        case "widgets": ".push-type.widgets"
        case "controls": ".push-type.controls"
        case "mdm": nil
        default: ""
        }
    }

    /// The known push type whose topic suffix `topic` ends with (`.voip`, `.push-type.liveactivity`
    /// …), when one does: what a topic says of its push, and what to strip for its app's bundle ID.
    package static func named(byTopic topic: String) -> PushType? {
        known.first { type in
            guard let suffix = type.topicSuffix, !suffix.isEmpty else { return false }
            return topic.hasSuffix(suffix)
        }
    }

    /// The largest body Apple accepts for this push type.
    public var maximumPayloadSize: Int { self == .voip ? 5120 : 4096 }

    /// The `apns-push-type` value.
    public var description: String { rawValue }
}
