/// Something that happened at a server, as its event observer hears it: the daemon's log and
/// metrics are built on these.
public enum ServerEvent: Sendable {
    /// A client connected and completed the TLS handshake.
    case connectionOpened(ConnectionInfo, listener: ListenerKind)
    /// A client's connection ended.
    case connectionClosed(ConnectionInfo, listener: ListenerKind)
    /// A client connected but the TLS handshake failed.
    case handshakeFailed(peer: String, listener: ListenerKind, reason: String)
    /// A listener closed a connection as soon as it accepted it, for want of room (a
    /// connection limit) or of a resource (a descriptor, a thread); every other connection
    /// goes on.
    case connectionRefused(peer: String, listener: ListenerKind, reason: ConnectionRefusal)
    /// Notifications were accepted, in order, with their sequence numbers.
    case accepted([PushNotification])
    /// A notification was refused.
    case rejected(Rejection)
    /// A client read the feedback service's pending tuples.
    case feedbackRead([FeedbackTuple], ConnectionInfo)
}

/// Which of a server's listeners.
public enum ListenerKind: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The binary gateway.
    case gateway
    /// The feedback service.
    case feedback
    /// The HTTP/2 provider API.
    case http2

    public var description: String { rawValue }
}

/// Why a listener closed a connection at once instead of serving it.
public enum ConnectionRefusal: Sendable, Equatable, CustomStringConvertible {
    /// The listener held `Configuration.maximumConnectionsPerListener` connections.
    case listenerLimit(Int)
    /// The server's listeners together held `Configuration.maximumConnections`.
    case totalLimit(Int)
    /// Serving the connection would have left fewer than `reserve` descriptors free under
    /// the process's limit of `limit` (`Configuration.reservedDescriptors`).
    case descriptorReserve(reserve: Int, limit: Int)
    /// The process had no descriptor left (EMFILE, ENFILE): the connection was taken with
    /// the listener's spare descriptor, only to be closed.
    case noDescriptor(String)
    /// The system would not start a thread for the connection.
    case noThread(String)
    /// The connection's TLS state could not be made (out of memory, usually).
    case noTLSState(String)

    /// A short name for counting refusals by cause (the daemon's metric label).
    public var cause: String {
        switch self {
        case .listenerLimit: "listener-limit"
        case .totalLimit: "total-limit"
        case .descriptorReserve: "descriptor-reserve"
        case .noDescriptor: "no-descriptor"
        case .noThread: "no-thread"
        case .noTLSState: "no-tls-state"
        }
    }

    public var description: String {
        switch self {
        case .listenerLimit(let limit): "too many connections on this listener (limit \(limit))"
        case .totalLimit(let limit): "too many connections on the server (limit \(limit))"
        case .descriptorReserve(let reserve, let limit):
            "too few descriptors left (\(reserve) kept free of the limit of \(limit))"
        case .noDescriptor(let reason): "no descriptor left: \(reason)"
        case .noThread(let reason): "no thread for the connection: \(reason)"
        case .noTLSState(let reason): "no TLS state for the connection: \(reason)"
        }
    }
}
