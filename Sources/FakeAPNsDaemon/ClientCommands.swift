/// `fake-apns send`: placeholder until the client commands land.
enum SendCommand {
    static func run(_ arguments: [String]) -> Int32 {
        FakeAPNsCommand.usageError("send is not available yet")
    }
}

/// `fake-apns feedback`: placeholder until the client commands land.
enum FeedbackCommand {
    static func run(_ arguments: [String]) -> Int32 {
        FakeAPNsCommand.usageError("feedback is not available yet")
    }
}
