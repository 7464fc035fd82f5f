import FakeAPNs
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `--devices` file: one device a line, `TOKEN [TOPIC] [sandbox|production] [{PHONE}]`
/// (the object: the phone's settings, as `PATCH /api/v1/devices/<token>` takes them), one
/// broadcast channel a line, `channel BUNDLE [policy=0|1] [id=BASE64] [TOKEN…]` (the tokens
/// are its subscribers), and one app a line, `app BUNDLE {APP}` (the object as
/// `PUT /api/v1/apps/<bundle>` takes it); blank lines and lines starting with `#` are skipped.
/// A token is hex, so a line starting with `channel` or `app` cannot be a device.
enum DevicesFile {
    struct Entry {
        let token: DeviceToken
        let topic: String?
        let environment: PushEnvironment?
        /// The phone's settings, when the line describes them.
        var phone: PhoneSettingsChange? = nil
    }

    /// An app to describe at start (and again at each reset).
    struct App: Sendable {
        let bundleID: String
        let bundle: AppBundle
    }

    /// A channel to create at start (and again at each reset, with the same id).
    struct Channel: Sendable {
        let bundleID: String
        let storagePolicy: FakeAPNs.Channel.StoragePolicy
        /// nil: the registry picks one at start.
        let id: String?
        let subscribers: [DeviceToken]
        /// Where it stands, for messages: "--devices FILE line 3".
        let origin: String
    }

    /// The devices and channels of one file, in the order they stand.
    struct Contents {
        var devices: [Entry] = []
        var channels: [Channel] = []
        var apps: [App] = []
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// Parses a token, as a `Result` (typed throws here trips the optimizer of Swift 6.3).
    private static func parseToken(_ text: String) -> Result<DeviceToken, DeviceTokenError> {
        Result { () throws(DeviceTokenError) in try DeviceToken(hex: text) }
    }

    static func read(_ path: String) throws -> Contents {
        let text = try Options.readFile("--devices", path)
        var contents = Contents()
        // The apps' bundle IDs, held to the catalog's bound as the control API holds them.
        var described = Set<String>()
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let origin = "--devices \(path) line \(index + 1)"
            // A line's JSON object runs from its first brace to its end (no token, topic or
            // bundle holds a brace).
            var object: String?
            if let brace = line.firstIndex(of: "{") {
                object = String(line[brace...])
                line = String(line[..<brace])
            }
            var fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            if fields.first == "app" {
                let app = try app(Array(fields.dropFirst()), object, origin: origin)
                described.insert(AppBundle.bundleID(of: app.bundleID))
                guard described.count <= AppCatalog.maximumApps else {
                    throw Problem(description: "\(origin): \(AppCatalogError.tooManyApps(bundleID: app.bundleID, limit: AppCatalog.maximumApps))")
                }
                contents.apps.append(app)
                continue
            }
            guard !fields.isEmpty else {
                throw Problem(description: "\(origin): the line starts with an object; a line is TOKEN [TOPIC] [sandbox|production] [{PHONE}]")
            }
            if fields[0] == "channel" {
                if object != nil { throw Problem(description: "\(origin): a channel line takes no object") }
                contents.channels.append(try channel(Array(fields.dropFirst()), origin: origin))
                continue
            }
            let token = try token(fields.removeFirst(), origin: origin)
            var topic: String?
            var environment: PushEnvironment?
            for field in fields {
                if let known = PushEnvironment(rawValue: field), environment == nil {
                    environment = known
                } else if topic == nil && environment == nil {
                    topic = field
                } else {
                    throw Problem(description: "\(origin): unexpected '\(field)'; a line is TOKEN [TOPIC] [sandbox|production]")
                }
            }
            let phone = try object.map { text in
                try decoding(text, allowed: PhoneJSON.settingKeys, origin: origin, naming: "the phone's settings") {
                    try PhoneSettingsChange($0)
                }
            }
            contents.devices.append(Entry(token: token, topic: topic, environment: environment, phone: phone))
        }
        return contents
    }

    /// `BUNDLE {APP}`, after the word `app`.
    private static func app(_ fields: [String], _ object: String?, origin: String) throws -> App {
        let usage =
            #"an app line is app BUNDLE {"categories":[...],"sounds":[...],"entitlements":[...],"#
            + #""liveActivityTypes":{...},"websiteURLFormat":"..."}"#
        guard fields.count == 1, let object else { throw Problem(description: "\(origin): \(usage)") }
        let bundle = try decoding(object, allowed: PhoneJSON.appBundleKeys, origin: origin, naming: "the app") {
            try AppBundle($0)
        }
        if let problem = bundle.boundsProblem(bundleID: fields[0]) {
            throw Problem(description: "\(origin): \(problem)")
        }
        return App(bundleID: fields[0], bundle: bundle)
    }

    /// The object of a line, read by the control API's rules; a problem names the line.
    private static func decoding<Value>(
        _ text: String, allowed: [String], origin: String, naming subject: String,
        _ decode: (BodyFields) throws -> Value
    ) throws -> Value {
        do {
            return try decode(BodyFields(Array(text.utf8), allowed: allowed))
        } catch let error as ControlError {
            throw Problem(description: "\(origin): \(subject): \(error.message)")
        }
    }

    private static func token(_ text: String, origin: String) throws -> DeviceToken {
        switch parseToken(text) {
        case .success(let parsed) where parsed.count > DeviceToken.maximumByteCount:
            throw Problem(
                description: "\(origin): a token of \(parsed.count) bytes; APNs takes 1 to \(DeviceToken.maximumByteCount)")
        case .success(let parsed): return parsed
        case .failure(let error): throw Problem(description: "\(origin): \(error)")
        }
    }

    /// `BUNDLE [policy=0|1] [id=BASE64] [TOKEN…]`, after the word `channel`. The id is checked
    /// when the channel is created, by the registry's own rule.
    private static func channel(_ fields: [String], origin: String) throws -> Channel {
        let usage = "a channel line is channel BUNDLE [policy=0|1] [id=BASE64] [TOKEN...]"
        guard let bundleID = fields.first, !bundleID.contains("=") else {
            throw Problem(description: "\(origin): the channel has no bundle; \(usage)")
        }
        var policy: FakeAPNs.Channel.StoragePolicy?
        var id: String?
        var subscribers: [DeviceToken] = []
        for field in fields.dropFirst() {
            if field.hasPrefix("policy="), policy == nil, subscribers.isEmpty {
                guard let value = Int(field.dropFirst(7)).flatMap(FakeAPNs.Channel.StoragePolicy.init(rawValue:)) else {
                    throw Problem(description: "\(origin): policy must be 0 or 1, not '\(field.dropFirst(7))'")
                }
                policy = value
            } else if field.hasPrefix("id="), id == nil, subscribers.isEmpty {
                id = String(field.dropFirst(3))
            } else if field.contains("=") {
                throw Problem(description: "\(origin): unexpected '\(field)'; \(usage)")
            } else {
                subscribers.append(try token(field, origin: "\(origin), subscriber '\(field.prefix(64))'"))
            }
        }
        return Channel(
            bundleID: bundleID, storagePolicy: policy ?? .noStorage, id: id, subscribers: subscribers, origin: origin)
    }
}
