import Foundation

/// Reading Swift values from JSON values, shared by the JSON containers.
package enum JSONScalars {
    package static func unexpected(_ type: Any.Type, _ value: JSONValue, path: [any CodingKey], context: DecodingContext, column: Int32) -> DecodingError {
        if case .null = value {
            return DecodingFailure.valueNotFound(type, found: "null value", path: path, location: context.jsonLocation(column: column))
        }
        return DecodingFailure.typeMismatch(type, found: value.kindDescription, path: path, location: context.jsonLocation(column: column))
    }

    package static func bool(_ value: JSONValue, path: @autoclosure () -> CodingPath, context: DecodingContext, column: Int32) throws -> Bool {
        guard case .bool(let bool) = value else { throw unexpected(Bool.self, value, path: path().keys, context: context, column: column) }
        return bool
    }

    package static func string(_ value: JSONValue, path: @autoclosure () -> CodingPath, context: DecodingContext, column: Int32) throws -> String {
        guard case .string(let text) = value else { throw unexpected(String.self, value, path: path().keys, context: context, column: column) }
        return text
    }

    /// A JSON number that is a whole number fitting the type exactly (`1e3` and `2.0` included).
    package static func integer<I: FixedWidthInteger>(_ type: I.Type, _ value: JSONValue, path: @autoclosure () -> CodingPath, context: DecodingContext, column: Int32) throws -> I {
        guard case .number(let text) = value else { throw unexpected(I.self, value, path: path().keys, context: context, column: column) }
        if let integer = I(text, radix: 10) { return integer }
        if let double = Double(text), let integer = I(exactly: double) { return integer }
        throw DecodingFailure.numberDoesNotFit(text, I.self, path: path().keys, location: context.jsonLocation(column: column))
    }

    package static func float<F: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: F.Type, _ value: JSONValue, path: @autoclosure () -> CodingPath, context: DecodingContext, column: Int32
    ) throws -> F {
        guard case .number(let text) = value else { throw unexpected(F.self, value, path: path().keys, context: context, column: column) }
        guard let float = F(text), float.isFinite else {
            throw DecodingFailure.numberDoesNotFit(text, F.self, path: path().keys, location: context.jsonLocation(column: column))
        }
        return float
    }

    /// Any `Decodable` from a JSON value, with the same special types as columns (``StoredForm``).
    package static func value<T: Decodable>(_ type: T.Type, _ value: JSONValue, path: CodingPath, context: DecodingContext, column: Int32) throws -> T {
        if StoredForm.isSpecial(T.self) {
            return try StoredForm.decode(T.self, from: JSONSource(value: value, parent: path, key: nil, context: context, column: column), key: { nil })
        }
        return try T(from: JSONTreeDecoder(value: value, path: path, context: context, column: column))
    }

    /// The member `key` of an object at `parent`: its path is made only when needed (an error, or a
    /// value with containers of its own), not for every scalar member.
    package static func value<T: Decodable>(_ type: T.Type, _ value: JSONValue, in parent: CodingPath, key: some CodingKey, context: DecodingContext, column: Int32) throws -> T {
        if StoredForm.isSpecial(T.self) {
            return try StoredForm.decode(T.self, from: JSONSource(value: value, parent: parent, key: AnyCodingKey(key), context: context, column: column), key: { nil })
        }
        return try T(from: JSONTreeDecoder(value: value, path: parent.appending(key), context: context, column: column))
    }

    /// Object members renamed by the key decoding strategy (the first of colliding names wins).
    package static func convertingKeys(_ members: [String: JSONValue], at path: CodingPath, options: DecodingOptions) -> [String: JSONValue] {
        guard options.convertsKeys else { return members }
        var converted: [String: JSONValue] = [:]
        converted.reserveCapacity(members.count)
        for (name, value) in members {
            let key = options.keyName(for: name, at: path)
            if converted[key] == nil { converted[key] = value }
        }
        return converted
    }
}

/// One value inside a column's JSON, as ``StoredForm`` reads it.
private struct JSONSource: StoredSource {
    let value: JSONValue
    /// The path of the object holding the value, and the value's key in it (`nil`: the value is at `parent`).
    let parent: CodingPath
    let key: AnyCodingKey?
    let context: DecodingContext
    let column: Int32

    var path: CodingPath { key.map { parent.appending($0) } ?? parent }

    var storageClass: StorageClass? {
        switch value {
        case .null: .null
        case .string: .text
        case .number(let text): Int64(text) != nil ? .integer : .real
        default: nil
        }
    }

    var isJSON: Bool { true }
    var numberLiteral: String? {
        if case .number(let text) = value { return text }
        return nil
    }

    var dateStrategy: CodingStrategy.DateDecoding { context.options.dateStrategy }

    func int64() -> Int64 {
        if case .number(let text) = value { return Int64(text) ?? 0 }
        return 0
    }

    func double() -> Double {
        if case .number(let text) = value { return Double(text) ?? .nan }
        return .nan
    }

    func text() -> String {
        if case .string(let text) = value { return text }
        return ""
    }

    func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        var text = text()
        return try text.withUTF8(body)
    }

    func blob() -> Data { Data() }
    // The key is already the last element of `path`.
    func decoder(key: () -> AnyCodingKey?) -> any Swift.Decoder { JSONTreeDecoder(value: value, path: path, context: context, column: column) }

    func unexpected(key: () -> AnyCodingKey?, _ type: Any.Type) -> DecodingError {
        JSONScalars.unexpected(type, value, path: path.keys, context: context, column: column)
    }

    func corrupted(key: () -> AnyCodingKey?, _ description: String) -> DecodingError {
        DecodingFailure.dataCorrupted(description, path: path.keys, location: context.jsonLocation(column: column))
    }

    func invalidDate(key: () -> AnyCodingKey?, _ text: String) -> DecodingError {
        DecodingFailure.invalidDate(text, path: path.keys, location: context.jsonLocation(column: column))
    }
}
