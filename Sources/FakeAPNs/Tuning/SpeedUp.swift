#if canImport(Glibc)
import Glibc
#endif

/// The measures in this folder, each of which can be turned off for measurement: the
/// environment variable `FAKEAPNS_SPEEDUPS_OFF`, read once when the process first asks, names
/// those that are off, comma-separated (`FAKEAPNS_SPEEDUPS_OFF=arena,prefault`; `all` turns
/// every one off). Unknown names are ignored. Each one's doc comment says which row of
/// `Scripts/bench.sh` it serves and what it buys there.
package enum SpeedUp: String, CaseIterable, Sendable {
    /// ``ByteArena``: payloads of a connection copied end to end into shared chunks.
    case arena
    /// ``HeapReserve``: a connection's malloc arena grown in large steps.
    case reserve
    /// ``HeapReserve``'s mapping ahead of the reserved room on a background thread.
    case prefault
    /// ``QuickClientPolling``: polling before sleeping for clients that answer quickly.
    case polling
    /// ``MemoryRelease/unusedStack()``: stack pages a deep call left resident given back.
    case stack
    /// ``MemoryRelease/freeHeap()``: free heap pages given back after a burst of connections.
    case trim

    /// Whether the measure is on (not named in `FAKEAPNS_SPEEDUPS_OFF`).
    package var isOn: Bool { !Self.off.contains(self) }

    private static let off: Set<SpeedUp> = {
        guard let value = getenv("FAKEAPNS_SPEEDUPS_OFF") else { return [] }
        var names: Set<String> = []
        var name = ""
        for character in String(cString: value) + "," {
            if character == "," {
                names.insert(name)
                name = ""
            } else if character != " " {
                name.append(character)
            }
        }
        return names.contains("all") ? Set(allCases) : Set(names.compactMap { SpeedUp(rawValue: $0) })
    }()
}
