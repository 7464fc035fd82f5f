/// Which of Apple's two environments a server plays, or a device token belongs to.
public enum PushEnvironment: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The development environment (`gateway.sandbox.push.apple.com`).
    case sandbox
    /// The production environment (`gateway.push.apple.com`).
    case production

    /// The environment's name, "sandbox" or "production".
    public var description: String { rawValue }
}
