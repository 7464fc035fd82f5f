/// Why a listener closed a connection at once instead of serving it.
public enum ConnectionRefusal: Sendable, Equatable, CustomStringConvertible {
    /// The listener held `Configuration.maximumConnectionsPerListener` connections.
    case listenerLimit(Int)
    /// The server's listeners together held `Configuration.maximumConnections`.
    case totalLimit(Int)
    /// Serving the connection would have left fewer than `reserve` descriptors free under
    /// the process's limit of `limit` (`Configuration.reservedDescriptors`).
    case descriptorReserve(reserve: Int, limit: Int)
    /// Serving the connection would have left the other listeners less than their share of the
    /// descriptors left for connections: `keptForOthers` stay free for them, each listener's
    /// share being `share`.
    case descriptorShare(share: Int, keptForOthers: Int)
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
        case .descriptorShare: "descriptor-share"
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
        case .descriptorShare(let share, let kept):
            "this listener has taken its share of the descriptors (\(kept) kept for the other listeners, \(share) each)"
        case .noDescriptor(let reason): "no descriptor left: \(reason)"
        case .noThread(let reason): "no thread for the connection: \(reason)"
        case .noTLSState(let reason): "no TLS state for the connection: \(reason)"
        }
    }
}
