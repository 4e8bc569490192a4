import Foundation

/// A value a search found: the value, its score, and its text around the words that matched.
///
/// ```swift
/// for hit in try await db.search(Note.self, for: "milk eggs", limit: 10) {
///     print(hit.score, hit.value.title)
///     print(hit.snippet(\.body))   // "…buy [milk] and a dozen [eggs] before…"
/// }
/// ```
///
/// Hits come best first. A ``score`` is higher for a better match; scores compare hits of one
/// search, not across searches or engines (SQLite ranks with FTS5's BM25, PostgreSQL with
/// `ts_rank`: see the article "Searching text").
///
/// Sendable: when `Value` is.
public struct SearchHit<Value: Model> {
    /// The value found, as ``ModelStore/get(_:id:)`` would return it.
    public let value: Value
    /// How well it matches: higher is better.
    public let score: Double
    /// The query's words, folded (lowercase, without accents).
    package let words: [String]
    /// Whether a word need only begin the same (stemmed languages), else only the last.
    package let matchesWordForms: Bool

    package init(value: Value, score: Double, query: SearchText, plan: SearchPlan) {
        self.value = value
        self.score = score
        self.words = query.words.map { SearchText.folded($0) }
        self.matchesWordForms = plan.matchesWordForms
    }

    /// Where the query's words occur in a text property of the value (its last word as a prefix),
    /// compared as the index compares them: ignoring case and accents.
    ///
    /// ```swift
    /// let ranges = hit.matches(in: \.title)
    /// ```
    public func matches(in keyPath: KeyPath<Value, String>) -> [Range<String.Index>] {
        matches(inText: value[keyPath: keyPath])
    }

    /// Where the query's words occur in an optional text property (none when it is `nil`).
    public func matches(in keyPath: KeyPath<Value, String?>) -> [Range<String.Index>] {
        value[keyPath: keyPath].map { matches(inText: $0) } ?? []
    }

    /// An excerpt of a text property around the words that matched: about `words` words, the
    /// matches wrapped in `opening` and `closing`, "…" where text is left out. Without a match in
    /// this property, its beginning.
    ///
    /// ```swift
    /// hit.snippet(\.body)                                              // "…buy [milk] and…"
    /// hit.snippet(\.body, words: 20, opening: "<b>", closing: "</b>")
    /// ```
    public func snippet(_ keyPath: KeyPath<Value, String>, words: Int = 12, opening: String = "[", closing: String = "]") -> String {
        snippet(ofText: value[keyPath: keyPath], words: words, opening: opening, closing: closing)
    }

    /// The excerpt of an optional text property around the words that matched (`""` when it is `nil`).
    public func snippet(_ keyPath: KeyPath<Value, String?>, words: Int = 12, opening: String = "[", closing: String = "]") -> String {
        value[keyPath: keyPath].map { snippet(ofText: $0, words: words, opening: opening, closing: closing) } ?? ""
    }

    private func isMatch(_ word: Substring) -> Bool {
        let folded = SearchText.folded(word)
        for (index, queryWord) in self.words.enumerated() {
            if folded == queryWord || (index == self.words.count - 1 && folded.hasPrefix(queryWord)) { return true }
            // Another form of the word (stemmed languages): the same beginning, all but a suffix.
            if matchesWordForms {
                let shared = zip(folded, queryWord).prefix { $0 == $1 }.count
                if shared >= max(3, min(folded.count, queryWord.count) - 2) { return true }
            }
        }
        return false
    }

    private func matches(inText text: String) -> [Range<String.Index>] {
        SearchText.wordRanges(in: text).filter { isMatch(text[$0]) }
    }

    private func snippet(ofText text: String, words length: Int, opening: String, closing: String) -> String {
        let ranges = SearchText.wordRanges(in: text)
        guard !ranges.isEmpty else { return text }
        let length = max(1, length)
        let matched = ranges.map { isMatch(text[$0]) }
        // The window of `length` words with the most matches (the first such), starting a few
        // words before its first match when it can.
        var best = 0, bestCount = -1, count = 0
        for end in matched.indices {
            if matched[end] { count += 1 }
            if end >= length, matched[end - length] { count -= 1 }
            let start = max(0, end - length + 1)
            if count > bestCount { best = start; bestCount = count }
        }
        if bestCount > 0 {
            // Up to two words before the window's first match, as long as its matches stay in.
            let end = min(ranges.count, best + length)
            let first = matched[best..<end].firstIndex(of: true) ?? best
            let last = matched[best..<end].lastIndex(of: true) ?? first
            let slack = length - (last - first + 1)
            best = max(0, min(first - min(2, slack), ranges.count - length))
        } else {
            best = 0
        }
        let last = min(ranges.count, best + length) - 1
        var result = best > 0 ? "…" : ""
        var cursor = best > 0 ? ranges[best].lowerBound : text.startIndex
        for index in best...last {
            let range = ranges[index]
            result += text[cursor..<range.lowerBound]
            result += matched[index] ? opening + text[range] + closing : String(text[range])
            cursor = range.upperBound
        }
        if last == ranges.count - 1 {
            result += text[cursor...]
        } else {
            result += "…"
        }
        return result
    }
}

extension SearchHit: Sendable where Value: Sendable {}

extension SearchHit: Identifiable {
    /// The value's id, so that hits can be listed directly (`ForEach(hits) { … }` in SwiftUI).
    public var id: Value.ID { value.id }
}

extension SearchHit: Equatable where Value: Equatable {
    /// The same value, score and query.
    public static func == (lhs: SearchHit, rhs: SearchHit) -> Bool {
        lhs.value == rhs.value && lhs.score == rhs.score && lhs.words == rhs.words
    }
}
