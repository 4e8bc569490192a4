/// A parsed JSON value, as stored in a TEXT column for nested structs, arrays and dictionaries.
///
/// Numbers keep their text so each is converted exactly to the type asked for
/// (`Int64`, `UInt64`, `Decimal`, `Double`…).
package enum JSONValue {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// How Foundation's JSON coders describe a value in errors: "a string", "an array"…
    package var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }
}

/// Why a text is not valid JSON, and where.
package struct JSONSyntaxError: Error {
    package let message: String
    package let offset: Int

    package var description: String { "\(message) at byte \(offset)" }
}

/// A strict RFC 8259 parser working on UTF-8 bytes in place.
package struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position: Int
    private var depth = 0
    private static let maximumDepth = 512

    /// Parses one JSON value filling the whole text (surrounding whitespace allowed).
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, position: bytes.startIndex)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.position == bytes.endIndex else {
            throw parser.error("Unexpected text after the JSON value")
        }
        return value
    }

    /// A JSON array of strings parsed straight into `[String]` (the common `[String]` column), or
    /// `nil` for anything else, which the general parser then reports precisely.
    package static func parseStringArray(_ bytes: UnsafeBufferPointer<UInt8>) -> [String]? {
        var parser = JSONParser(bytes: bytes, position: bytes.startIndex)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "[") else { return nil }
        parser.position += 1
        var strings: [String] = []
        parser.skipWhitespace()
        if parser.peek() == UInt8(ascii: "]") {
            parser.position += 1
        } else {
            // One allocation of the right size rather than growing by doubling: each string has two
            // quotes (an escaped quote only makes the estimate a little high).
            var quotes = 0
            for byte in bytes where byte == UInt8(ascii: "\"") { quotes &+= 1 }
            strings.reserveCapacity(quotes / 2)
            while true {
                parser.skipWhitespace()
                guard parser.peek() == UInt8(ascii: "\""), let string = try? parser.parseString() else { return nil }
                strings.append(string)
                parser.skipWhitespace()
                if parser.peek() == UInt8(ascii: ",") {
                    parser.position += 1
                } else if parser.peek() == UInt8(ascii: "]") {
                    parser.position += 1
                    break
                } else {
                    return nil
                }
            }
        }
        parser.skipWhitespace()
        return parser.position == bytes.endIndex ? strings : nil
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, position: Int) {
        self.bytes = bytes
        self.position = position
    }

    private func error(_ message: String) -> JSONSyntaxError {
        JSONSyntaxError(message: message, offset: position - bytes.startIndex)
    }

    private func peek() -> UInt8? {
        position < bytes.endIndex ? bytes[position] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            position += 1
        }
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard let byte = peek() else { throw error("Unexpected end of text, expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("Unexpected character '\(Unicode.Scalar(byte))'")
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.endIndex else { throw error("Invalid literal") }
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
        for offset in 0..<count where bytes[position + offset] != expected[offset] {
            throw error("Invalid literal")
        }
        position += count
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maximumDepth { throw error("JSON nested more than \(Self.maximumDepth) levels deep") }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                depth -= 1
                return .array(elements)
            default: throw error("Expected ',' or ']' in array")
            }
        }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        position += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw error("Expected a string key in object") }
            let key = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw error("Expected ':' after object key") }
            position += 1
            skipWhitespace()
            members[key] = try parseValue()
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                depth -= 1
                return .object(members)
            default: throw error("Expected ',' or '}' in object")
            }
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        position += 1  // opening quote
        let start = position
        // Fast path: no escapes.
        while let byte = peek() {
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("Unescaped control character in string") }
            position += 1
        }
        var buffer = Array(bytes[start..<position])
        while let byte = peek() {
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer)
            case 0..<0x20:
                position -= 1
                throw error("Unescaped control character in string")
            default:
                buffer.append(byte)
            }
        }
        throw error("Unterminated string")
    }

    private mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONSyntaxError) {
        guard let escaped = peek() else { throw error("Unterminated escape") }
        position += 1
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escaped)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var scalarValue = UInt32(try parseHex4())
            if (0xD800...0xDBFF).contains(scalarValue) {
                guard peek() == UInt8(ascii: "\\"), position + 1 < bytes.endIndex, bytes[position + 1] == UInt8(ascii: "u")
                else { throw error("Unpaired UTF-16 surrogate in \\u escape") }
                position += 2
                let low = UInt32(try parseHex4())
                guard (0xDC00...0xDFFF).contains(low) else { throw error("Invalid UTF-16 surrogate pair in \\u escape") }
                scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalarValue) {
                throw error("Unpaired UTF-16 surrogate in \\u escape")
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw error("Invalid \\u escape") }
            buffer.append(contentsOf: String(Character(scalar)).utf8)
        default:
            position -= 1
            throw error("Invalid escape '\\\(Unicode.Scalar(escaped))'")
        }
    }

    private mutating func parseHex4() throws(JSONSyntaxError) -> UInt16 {
        guard position + 4 <= bytes.endIndex else { throw error("Incomplete \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("Invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> String {
        let start = position
        if peek() == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), isDigit(first) else { throw error("Invalid number") }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard let byte = peek(), isDigit(byte) else { throw error("Invalid number: no digits after '.'") }
            skipDigits()
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            position += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { position += 1 }
            guard let byte = peek(), isDigit(byte) else { throw error("Invalid number: no digits in exponent") }
            skipDigits()
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { position += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
