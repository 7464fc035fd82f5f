/// One connection to the feedback service: write every pending tuple, then close. The client
/// sends nothing; whatever it sends is ignored.
struct FeedbackSession {
    let connection: TLSListener.Connection
    let feedback: FeedbackService
    let onRead: @Sendable ([FeedbackTuple], ConnectionInfo) -> Void

    func run() {
        let tuples = feedback.takePending()
        let bytes = tuples.flatMap(\.bytes)
        do {
            if !bytes.isEmpty { try connection.stream.write(bytes) }
        } catch {
            // The client left before reading: the tuples go back for the next reader.
            tuples.forEach { feedback.add($0) }
            return
        }
        onRead(tuples, connection.info)
    }
}
