import FakeAPNs
import Foundation

/// The `--devices` file: one device a line, `TOKEN [TOPIC] [sandbox|production]`; blank lines
/// and lines starting with `#` are skipped.
enum DevicesFile {
    struct Entry {
        let token: DeviceToken
        let topic: String?
        let environment: PushEnvironment?
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// Parses a token, as a `Result` (typed throws here trips the optimizer of Swift 6.3).
    private static func parseToken(_ text: String) -> Result<DeviceToken, DeviceTokenError> {
        Result { () throws(DeviceTokenError) in try DeviceToken(hex: text) }
    }

    static func read(_ path: String) throws -> [Entry] {
        let text = try Options.readFile("--devices", path)
        var entries: [Entry] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            var fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            let token: DeviceToken
            switch parseToken(fields.removeFirst()) {
            case .success(let parsed) where parsed.count > DeviceToken.maximumByteCount:
                throw Problem(
                    description: "--devices \(path) line \(index + 1): a token of \(parsed.count) bytes; APNs takes 1 to \(DeviceToken.maximumByteCount)")
            case .success(let parsed): token = parsed
            case .failure(let error): throw Problem(description: "--devices \(path) line \(index + 1): \(error)")
            }
            var topic: String?
            var environment: PushEnvironment?
            for field in fields {
                if let known = PushEnvironment(rawValue: field), environment == nil {
                    environment = known
                } else if topic == nil && environment == nil {
                    topic = field
                } else {
                    throw Problem(description: "--devices \(path) line \(index + 1): unexpected '\(field)'; a line is TOKEN [TOPIC] [sandbox|production]")
                }
            }
            entries.append(Entry(token: token, topic: topic, environment: environment))
        }
        return entries
    }
}
