// Text edits of the daemon's for which Foundation has methods that FoundationEssentials lacks
// (`CharacterSet`, `trimmingCharacters(in:)`, `padding(toLength:withPad:startingAt:)`): the
// daemon imports FoundationEssentials only, so that its binary holds no ICU data.

extension StringProtocol {
    /// The text without the spaces and tabs at either end: what Foundation's
    /// `trimmingCharacters(in: .whitespaces)` removes (tab and Unicode's space separators, not
    /// line breaks).
    func trimmingWhitespace() -> String {
        trimming { $0 == "\t" || $0.properties.generalCategory == .spaceSeparator }
    }

    /// The text without the scalars at either end for which `isTrimmed` holds.
    func trimming(_ isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
            let last = scalars.lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// The text followed by spaces up to `width` characters; longer text stays whole.
    func padded(to width: Int) -> String {
        String(self) + String(repeating: " ", count: Swift.max(0, width - count))
    }
}
