#if canImport(Glibc)
import Glibc
#endif

/// The measures in this folder, each of which can be turned off for measurement: the
/// environment variable `FAKEAPNS_SPEEDUPS_OFF`, read once when the process first asks, names
/// those that are off, comma-separated (`FAKEAPNS_SPEEDUPS_OFF=arena,prefault`; `all` turns
/// every one off). Unknown names are ignored. Each one's doc comment says which row of
/// `Scripts/bench.sh` it serves and what it buys there.
package enum SpeedUp: String, CaseIterable, Sendable {
    /// ``PayloadArena``: payloads of a connection copied end to end into shared chunks.
    case arena
    /// ``HeapReserve``: a connection's malloc arena grown in large steps.
    case reserve
    /// ``HeapReserve``'s mapping ahead of the reserved room on a background thread.
    case prefault
    /// ``StripedLocks``: a few shared locks for the parse results of many chunks.
    case stripes
    /// ``QuickClientPolling``: polling before sleeping for clients that answer quickly.
    case polling
    /// Giving back the stack pages a deep call left resident, when a connection goes quiet.
    case stack
    /// Giving the heap's free pages back to the system after a burst of connections.
    case trim

    /// Whether the measure is on (not named in `FAKEAPNS_SPEEDUPS_OFF`).
    package var isOn: Bool { !Self.off.contains(self) }

    private static let off: Set<SpeedUp> = {
        guard let value = getenv("FAKEAPNS_SPEEDUPS_OFF") else { return [] }
        let names = String(cString: value).split(separator: ",").map { $0.trimmingASCIISpaces() }
        if names.contains("all") { return Set(allCases) }
        return Set(names.compactMap { SpeedUp(rawValue: $0) })
    }()
}

extension Substring {
    fileprivate func trimmingASCIISpaces() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
