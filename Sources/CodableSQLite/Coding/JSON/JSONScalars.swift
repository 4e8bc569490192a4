import Foundation

/// Reading Swift values from JSON values, shared by the JSON containers.
enum JSONScalars {
    static func unexpected(_ type: Any.Type, _ value: JSONValue, path: [any CodingKey], context: DecodingContext, column: Int32) -> DecodingError {
        if case .null = value {
            return DecodingFailure.valueNotFound(type, found: "null value", path: path, location: context.jsonLocation(column: column))
        }
        return DecodingFailure.typeMismatch(type, found: value.kindDescription, path: path, location: context.jsonLocation(column: column))
    }

    static func bool(_ value: JSONValue, path: CodingPath, context: DecodingContext, column: Int32) throws -> Bool {
        guard case .bool(let bool) = value else { throw unexpected(Bool.self, value, path: path.keys, context: context, column: column) }
        return bool
    }

    static func string(_ value: JSONValue, path: CodingPath, context: DecodingContext, column: Int32) throws -> String {
        guard case .string(let text) = value else { throw unexpected(String.self, value, path: path.keys, context: context, column: column) }
        return text
    }

    /// A JSON number that is a whole number fitting the type exactly (`1e3` and `2.0` included).
    static func integer<I: FixedWidthInteger>(_ type: I.Type, _ value: JSONValue, path: CodingPath, context: DecodingContext, column: Int32) throws -> I {
        guard case .number(let text) = value else { throw unexpected(I.self, value, path: path.keys, context: context, column: column) }
        if let integer = I(text, radix: 10) { return integer }
        if let double = Double(text), let integer = I(exactly: double) { return integer }
        throw DecodingFailure.numberDoesNotFit(text, I.self, path: path.keys, location: context.jsonLocation(column: column))
    }

    static func float<F: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: F.Type, _ value: JSONValue, path: CodingPath, context: DecodingContext, column: Int32
    ) throws -> F {
        guard case .number(let text) = value else { throw unexpected(F.self, value, path: path.keys, context: context, column: column) }
        guard let float = F(text), float.isFinite else {
            throw DecodingFailure.numberDoesNotFit(text, F.self, path: path.keys, location: context.jsonLocation(column: column))
        }
        return float
    }

    /// Any `Decodable` from a JSON value, with the same special types as columns.
    static func value<T: Decodable>(_ type: T.Type, _ value: JSONValue, path: CodingPath, context: DecodingContext, column: Int32) throws -> T {
        if T.self == Date.self {
            return identityCast(try date(value, path: path, context: context, column: column), to: T.self)
        } else if T.self == UUID.self {
            let text = try string(value, path: path, context: context, column: column)
            var utf8 = text
            guard let uuid = utf8.withUTF8(ValueParsing.uuid) else {
                throw DecodingFailure.dataCorrupted(
                    "Attempted to decode UUID from invalid UUID string \"\(DecodingFailure.preview(text))\"",
                    path: path.keys, location: context.jsonLocation(column: column))
            }
            return identityCast(uuid, to: T.self)
        } else if T.self == URL.self {
            let text = try string(value, path: path, context: context, column: column)
            guard let url = URL(string: text) else {
                throw DecodingFailure.dataCorrupted(
                    "Invalid URL string \"\(DecodingFailure.preview(text))\"", path: path.keys, location: context.jsonLocation(column: column))
            }
            return identityCast(url, to: T.self)
        } else if T.self == Data.self {
            let text = try string(value, path: path, context: context, column: column)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingFailure.dataCorrupted(
                    "Encountered Data is not valid Base64", path: path.keys, location: context.jsonLocation(column: column))
            }
            return identityCast(data, to: T.self)
        } else if T.self == Decimal.self {
            let text: String
            switch value {
            case .number(let number): text = number
            case .string(let string): text = string
            default: throw unexpected(Decimal.self, value, path: path.keys, context: context, column: column)
            }
            guard let decimal = ValueParsing.decimal(text) else {
                throw DecodingFailure.dataCorrupted(
                    "Text \"\(DecodingFailure.preview(text))\" is not a decimal number", path: path.keys, location: context.jsonLocation(column: column))
            }
            return identityCast(decimal, to: T.self)
        }
        return try T(from: JSONTreeDecoder(value: value, path: path, context: context, column: column))
    }

    private static func date(_ value: JSONValue, path: CodingPath, context: DecodingContext, column: Int32) throws -> Date {
        switch context.options.dateStrategy {
        case .iso8601:
            switch value {
            case .string(let text):
                var utf8 = text
                if let date = utf8.withUTF8(DateText.parse) { return date }
                throw DecodingFailure.invalidDate(text, path: path.keys, location: context.jsonLocation(column: column))
            case .number:
                return Date(timeIntervalSince1970: try float(Double.self, value, path: path, context: context, column: column))
            default:
                throw unexpected(Date.self, value, path: path.keys, context: context, column: column)
            }
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try float(Double.self, value, path: path, context: context, column: column))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try float(Double.self, value, path: path, context: context, column: column) / 1000)
        case .deferredToDate:
            return Date(timeIntervalSinceReferenceDate: try float(Double.self, value, path: path, context: context, column: column))
        case .formatted(let formatter):
            let text = try string(value, path: path, context: context, column: column)
            if let date = formatter.date(from: text) { return date }
            throw DecodingFailure.dataCorrupted(
                "Date string \"\(DecodingFailure.preview(text))\" does not match format expected by formatter",
                path: path.keys, location: context.jsonLocation(column: column))
        case .custom(let decode):
            return try decode(JSONTreeDecoder(value: value, path: path, context: context, column: column))
        }
    }

    /// Object members renamed by the key decoding strategy (the first of colliding names wins).
    static func convertingKeys(_ members: [String: JSONValue], at path: CodingPath, options: DecodingOptions) -> [String: JSONValue] {
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
