extension RandomAccessCollection where Index == Int {
    /// The index of the first element for which `isPast` holds, in a collection where every
    /// element for which it holds comes after every one for which it does not: a binary search,
    /// for the stores here that keep their items in the order of a number (sequence numbers,
    /// subscription numbers, waiter ids). `endIndex` when it holds for none.
    func sortedIndex(past isPast: (Element) -> Bool) -> Int {
        var low = startIndex
        var high = endIndex
        while low < high {
            let middle = low + (high - low) / 2
            if isPast(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
