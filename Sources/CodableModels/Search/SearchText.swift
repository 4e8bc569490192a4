import Foundation

/// What a person typed into a search box, as words: runs of letters, digits and marks. Everything
/// else (quotes, `*`, `-`, parentheses, `:`) only separates words, and every word is quoted when
/// given to an engine, so `AND`, `OR`, `NEAR` and `NOT` are words like any other: typed text is
/// never query syntax. The last word matches as a prefix (type-ahead).
package struct SearchText: Sendable, Equatable {
    /// The most words a query keeps; the rest of a very long text is ignored.
    package static let maximumWords = 64

    /// The words, in order (as typed: each engine folds case and accents its own way).
    package let words: [String]

    package init(_ text: String) {
        words = Self.wordRanges(in: text).prefix(Self.maximumWords).map { String(text.unicodeScalars[$0]) }
    }

    /// Whether the text has no word (then nothing matches).
    package var isEmpty: Bool { words.isEmpty }

    /// SQLite FTS5's query: each word a quoted string, all of them required, the last a prefix.
    package var fts5Query: String {
        words.enumerated().map { index, word in
            "\"" + word.replacingOccurrences(of: "\"", with: "\"\"") + "\"" + (index == words.count - 1 ? "*" : "")
        }.joined(separator: " ")
    }

    enum Kind { case letterOrDigit, mark, separator }

    /// How a character counts: as SQLite's `unicode61` tokenizer counts it (letters, numbers and
    /// private-use characters make words; combining marks belong to the word they follow).
    static func kind(of scalar: Unicode.Scalar) -> Kind {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .privateUse:
            return .letterOrDigit
        case .nonspacingMark, .spacingMark, .enclosingMark:
            return .mark
        default:
            return .separator
        }
    }

    /// The words of `text` with where each is, for highlighting.
    static func wordRanges(in text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        var start: String.Index?
        var hasLetterOrDigit = false
        var index = text.unicodeScalars.startIndex
        while index < text.unicodeScalars.endIndex {
            let scalar = text.unicodeScalars[index]
            switch kind(of: scalar) {
            case .letterOrDigit:
                if start == nil { start = index }
                hasLetterOrDigit = true
            case .mark:
                if start == nil { start = index }
            case .separator:
                if let begin = start, hasLetterOrDigit { ranges.append(begin..<index) }
                start = nil
                hasLetterOrDigit = false
            }
            index = text.unicodeScalars.index(after: index)
        }
        if let begin = start, hasLetterOrDigit { ranges.append(begin..<text.endIndex) }
        return ranges
    }

    /// A word folded for comparison: lowercase, without accents.
    static func folded<S: StringProtocol>(_ word: S) -> String {
        word.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }
}
