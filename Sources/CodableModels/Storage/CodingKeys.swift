/// A coding key made from a string or an array index, for coding paths and dictionary keys.
@usableFromInline package struct AnyCodingKey: CodingKey, Sendable {
    @usableFromInline package let stringValue: String
    @usableFromInline package let intValue: Int?

    @usableFromInline package init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    @usableFromInline package init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    @usableFromInline package init(_ key: some CodingKey) {
        stringValue = key.stringValue
        intValue = key.intValue
    }

    /// The key `super`, which `superEncoder()` and `superDecoder()` use.
    @usableFromInline package static let `super` = AnyCodingKey(stringValue: "super")
}

/// A coding path as a linked list, so descending into nested values costs nothing until an
/// error needs the path as an array.
@usableFromInline package final class CodingPath: Sendable {
    @usableFromInline package let parent: CodingPath?
    @usableFromInline package let key: AnyCodingKey?

    @usableFromInline package static let root = CodingPath(parent: nil, key: nil)

    private init(parent: CodingPath?, key: AnyCodingKey?) {
        self.parent = parent
        self.key = key
    }

    @usableFromInline package func appending(_ key: some CodingKey) -> CodingPath {
        CodingPath(parent: self, key: AnyCodingKey(key))
    }

    @usableFromInline package func appending(index: Int) -> CodingPath {
        CodingPath(parent: self, key: AnyCodingKey(intValue: index))
    }

    @usableFromInline package var keys: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node: CodingPath? = self
        while let current = node, let key = current.key {
            keys.append(key)
            node = current.parent
        }
        return keys.reversed()
    }

    /// The path plus `key`, as an array.
    @usableFromInline package func keys(appending key: (any CodingKey)?) -> [any CodingKey] {
        var keys = self.keys
        if let key { keys.append(key) }
        return keys
    }
}

/// Key conversions shared by the encoder and decoder strategies.
@usableFromInline package enum KeyConversion {
    /// `dueDate` → `due_date`, `myURLProperty` → `my_url_property`, `item2Name` → `item2_name`.
    ///
    /// A word starts at a capital that follows a lowercase letter or a digit, or at the last
    /// capital of an acronym when a lowercase letter follows it.
    @usableFromInline package static func toSnakeCase(_ key: String) -> String {
        let characters = Array(key)
        var result = ""
        result.reserveCapacity(key.utf8.count + 4)
        for (offset, character) in characters.enumerated() {
            if character.isUppercase, offset > 0 {
                let previous = characters[offset - 1]
                let nextIsLowercase = offset + 1 < characters.count && characters[offset + 1].isLowercase
                let startsWord = previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLowercase)
                if startsWord && result.last != "_" { result.append("_") }
            }
            result.append(contentsOf: character.lowercased())
        }
        return result
    }

    /// `due_date` → `dueDate`: each word after an underscore is capitalized and the inner
    /// underscores removed; leading and trailing underscores are kept.
    @usableFromInline package static func fromSnakeCase(_ key: String) -> String {
        guard key.contains("_") else { return key }
        let leading = key.prefix { $0 == "_" }
        guard leading.count < key.count else { return key }
        let trailing = key.reversed().prefix { $0 == "_" }
        let core = key.dropFirst(leading.count).dropLast(trailing.count)
        var result = String(leading)
        for (offset, word) in core.split(separator: "_").enumerated() {
            if offset == 0 {
                result += word
            } else {
                result += word.prefix(1).uppercased() + word.dropFirst().lowercased()
            }
        }
        return result + String(trailing)
    }
}
