/// One token of SQL, as far as ``PinnedRows`` needs to tell them apart.
enum SQLToken: Equatable {
    /// A name or keyword: `text` as written, `name` unquoted.
    case word(text: String, name: String, isQuoted: Bool)
    /// An unsigned number, as written.
    case number(String)
    /// A string or blob literal.
    case string
    /// `?`, `?NNN`, `:name`, `@name` or `$name`.
    case parameter(String)
    /// An operator or punctuation.
    case symbol(String)

    /// Whether this is the unquoted keyword `keyword` (upper-case).
    func isKeyword(_ keyword: String) -> Bool {
        if case .word(let text, _, false) = self { return text.uppercased() == keyword }
        return false
    }

    /// The unquoted name, for names and keywords.
    var identifier: String? {
        if case .word(_, let name, _) = self { return name }
        return nil
    }

    /// The token as written (for names), to put it in other SQL.
    var text: String {
        switch self {
        case .word(let text, _, _), .number(let text), .parameter(let text), .symbol(let text): text
        case .string: "''"
        }
    }
}

/// SQL split into tokens, comments and white space dropped; `nil` for what it does not
/// recognise (the caller then proves nothing).
struct SQLTokens {
    private(set) var tokens: [SQLToken] = []

    init?(_ sql: String) {
        let scalars = Array(sql.unicodeScalars)
        var index = 0
        func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
            // As SQLite: ASCII letters and digits, `_`, `$`, and every character beyond ASCII.
            switch scalar.value {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x5F, 0x24, 0x80...: true
            default: false
            }
        }
        while index < scalars.count {
            let scalar = scalars[index]
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            if [" ", "\t", "\n", "\r", "\u{0C}"].contains(scalar) {
                index += 1
            } else if scalar == "-", next == "-" {
                while index < scalars.count, scalars[index] != "\n" { index += 1 }
            } else if scalar == "/", next == "*" {
                index += 2
                while index < scalars.count, !(scalars[index] == "*" && index + 1 < scalars.count && scalars[index + 1] == "/") { index += 1 }
                guard index < scalars.count else { return nil }
                index += 2
            } else if scalar == "'" || scalar == "\"" || scalar == "`" || scalar == "[" {
                // Quoted: a doubled quote stands for itself (not inside [ ]).
                let close: Unicode.Scalar = scalar == "[" ? "]" : scalar
                let start = index
                var name = String.UnicodeScalarView()
                index += 1
                while true {
                    guard index < scalars.count else { return nil }
                    if scalars[index] == close {
                        if close != "]", index + 1 < scalars.count, scalars[index + 1] == close {
                            name.append(close)
                            index += 2
                            continue
                        }
                        break
                    }
                    name.append(scalars[index])
                    index += 1
                }
                index += 1
                if scalar == "'" {
                    tokens.append(.string)
                } else {
                    let text = String(String.UnicodeScalarView(scalars[start..<index]))
                    tokens.append(.word(text: text, name: String(name), isQuoted: true))
                }
            } else if (scalar == "x" || scalar == "X"), next == "'" {
                index += 1   // a blob literal: the string that follows
            } else if ("0"..."9").contains(scalar) || (scalar == "." && next.map { ("0"..."9").contains($0) } == true) {
                let start = index
                while index < scalars.count, isWordCharacter(scalars[index]) || scalars[index] == "." { index += 1 }
                tokens.append(.number(String(String.UnicodeScalarView(scalars[start..<index]))))
            } else if scalar == "?" || scalar == ":" || scalar == "@" || (scalar == "$" && next.map(isWordCharacter) == true) {
                let start = index
                index += 1
                while index < scalars.count, isWordCharacter(scalars[index]) { index += 1 }
                tokens.append(.parameter(String(String.UnicodeScalarView(scalars[start..<index]))))
            } else if isWordCharacter(scalar) {
                let start = index
                while index < scalars.count, isWordCharacter(scalars[index]) { index += 1 }
                let word = String(String.UnicodeScalarView(scalars[start..<index]))
                tokens.append(.word(text: word, name: word, isQuoted: false))
            } else {
                let pair = next.map { String(scalar) + String($0) }
                if let pair, ["==", "!=", "<>", "<=", ">=", "||", "->", "<<", ">>"].contains(pair) {
                    tokens.append(.symbol(pair))
                    index += 2
                } else {
                    tokens.append(.symbol(String(scalar)))
                    index += 1
                }
            }
        }
    }

    /// The same tokens with positional parameters written `?N`, N being the number SQLite gives
    /// them: a bare `?` one more than the largest number so far, `?NNN` NNN.
    func numberingPositionalParameters() -> SQLTokens {
        var copy = self
        var largest = 0
        for index in copy.tokens.indices {
            guard case .parameter(let text) = copy.tokens[index] else { continue }
            // Names are left alone: positional arguments prove nothing when there are any.
            guard text.hasPrefix("?") else { continue }
            let number = text == "?" ? largest + 1 : Int(text.dropFirst()) ?? -1
            copy.tokens[index] = .parameter("?\(number)")
            largest = max(largest, number)
        }
        return copy
    }
}
