// The shims include the same C headers; importing both keeps their names in one place
// whichever module the compiler loads first.
internal import CNGHTTP2Shims
internal import CNGHTTP2

/// SETTINGS identifiers, as plain integers for the session wrapper.
enum NGHTTP2Settings {
    static let headerTableSize = Int(NGHTTP2_SETTINGS_HEADER_TABLE_SIZE.rawValue)
    static let maxConcurrentStreams = Int(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue)
    static let initialWindowSize = Int(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue)
    static let maxFrameSize = Int(NGHTTP2_SETTINGS_MAX_FRAME_SIZE.rawValue)
    static let maxHeaderListSize = Int(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue)
}
