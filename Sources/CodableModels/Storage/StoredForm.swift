import Foundation

/// The storage contract, in one place: how values of the types SQLite has no type for (`Date`,
/// `UUID`, `URL`, `Data`, `Decimal`) become stored scalars and come back, how numbers are
/// checked, and which column type each Swift type is declared with.
///
/// Every path that stores or reads values goes through here: column parameters
/// (``RowEncoder``), single stored values such as filter arguments and key-value entries
/// (``ValueEncoder``), values nested in JSON (``JSONTreeEncoder``, ``JSONScalars``), result
/// columns (``RowDecoder``) and model tables (``StorageType/of(_:)``). Adding a special type
/// means adding it to ``isSpecial(_:)``, ``encode(_:at:options:)``, ``decode(_:from:)`` and
/// ``StorageType``, all in this file.
@usableFromInline package enum StoredForm {
    /// Whether values of `type` are stored by a rule of this file rather than through their own
    /// `Codable` implementation.
    @inlinable @inline(__always)
    package static func isSpecial(_ type: Any.Type) -> Bool {
        type == Date.self || type == UUID.self || type == Data.self || type == URL.self || type == Decimal.self
    }

    // MARK: Encoding

    /// A special value in its stored form, before it is placed in a column or in JSON.
    @usableFromInline package enum Scalar {
        /// Stored as this value. Inside JSON: numbers as numbers, text as strings, a blob as a
        /// Base64 string.
        case value(StoredValue)
        /// A `Decimal`'s exact text: TEXT in a column, a number in JSON.
        case decimal(String)
        /// Written by a custom date strategy into whichever encoder the context provides.
        case custom((any Swift.Encoder) throws -> Void)
    }

    /// The stored form of a value of a special type (``isSpecial(_:)`` must be true for `T`).
    @usableFromInline package static func encode<T: Encodable>(_ value: T, at path: @autoclosure () -> CodingPath, options: EncodingOptions) throws -> Scalar {
        if T.self == Date.self {
            return try date(identityCast(value, to: Date.self), at: path(), options: options)
        } else if T.self == UUID.self {
            return .value(.text(ValueParsing.text(of: try identityCast(value, to: UUID.self))))
        } else if T.self == URL.self {
            return .value(.text(try identityCast(value, to: URL.self).absoluteString))
        } else if T.self == Data.self {
            return .value(.data(try identityCast(value, to: Data.self)))
        }
        let decimal = try identityCast(value, to: Decimal.self)
        guard !decimal.isNaN else {
            throw EncodingError.invalidValue(decimal, EncodingError.Context(
                codingPath: path().keys, debugDescription: "Unable to store Decimal NaN: stored numbers are never NaN (SQLite would store NULL)."))
        }
        return .decimal(decimal.description)
    }

    private static func date(_ date: Date, at path: @autoclosure () -> CodingPath, options: EncodingOptions) throws -> Scalar {
        switch options.dateStrategy {
        case .iso8601:
            return .value(.text(try dateText(for: date, path: path())))
        case .secondsSince1970:
            return .value(try dateNumber(date.timeIntervalSince1970, of: date, at: path))
        case .millisecondsSince1970:
            return .value(try dateNumber(date.timeIntervalSince1970 * 1000, of: date, at: path))
        case .deferredToDate:
            return .value(try dateNumber(date.timeIntervalSinceReferenceDate, of: date, at: path))
        case .formatted(let formatter):
            return .value(.text(formatter.string(from: date)))
        case .custom(let encode):
            return .custom { encoder in try encode(date, encoder) }
        }
    }

    /// A date as REAL; NaN is an error (SQLite would store NULL).
    private static func dateNumber(_ value: Double, of date: Date, at path: () -> CodingPath) throws -> StoredValue {
        guard !value.isNaN else {
            throw EncodingError.invalidValue(reportable(date), EncodingError.Context(
                codingPath: path().keys, debugDescription: "Unable to store a Date whose time is NaN: stored numbers are never NaN (SQLite would store NULL)."))
        }
        return .double(value)
    }

    /// A date as the default text, `YYYY-MM-DD HH:MM:SS[.fraction]` UTC.
    @usableFromInline package static func dateText(for date: Date, path: @autoclosure () -> CodingPath) throws -> String {
        guard let text = DateText.format(date) else {
            throw EncodingError.invalidValue(reportable(date), EncodingError.Context(
                codingPath: path().keys,
                debugDescription: "Unable to store Date \(date.timeIntervalSinceReferenceDate) (seconds since 2001) as text: "
                    + "the date text format covers years 0 to 9999. Use dateEncodingStrategy .secondsSince1970 for other dates."))
        }
        return text
    }

    /// The date, or its time interval when the date is NaN or infinite: describing such a `Date`
    /// traps in Foundation, and errors get described.
    @usableFromInline package static func reportable(_ date: Date) -> Any {
        date.timeIntervalSinceReferenceDate.isFinite ? date : date.timeIntervalSinceReferenceDate
    }

    /// The column value of a stored form.
    @usableFromInline package static func columnValue(_ scalar: Scalar, at path: @autoclosure () -> CodingPath, options: EncodingOptions) throws -> StoredValue {
        switch scalar {
        case .value(let value): return value
        case .decimal(let text): return .text(text)
        case .custom(let write):
            let encoder = ValueEncoder(path: path(), options: options)
            try write(encoder)
            return encoder.result
        }
    }

    /// The JSON of a stored form; something that writes nothing is an empty object, as in JSONEncoder.
    @usableFromInline package static func jsonNode(_ scalar: Scalar, at path: CodingPath, options: EncodingOptions) throws -> JSONNode {
        switch scalar {
        case .value(.null): return .null
        case .value(.integer(let integer)): return .number(String(integer))
        case .value(.double(let double)): return try jsonNumber(double, at: path)
        case .value(.text(let text)): return .string(text)
        case .value(.data(let data)): return .string(data.base64EncodedString())
        case .decimal(let text): return .number(text)
        case .custom(let write):
            let encoder = JSONTreeEncoder(path: path, options: options)
            try write(encoder)
            return encoder.root ?? .object(JSONObjectBox())
        }
    }

    // MARK: Numbers

    /// An integer as SQLite's 64-bit signed INTEGER, or `EncodingError` when it does not fit.
    @inlinable @inline(__always)
    package static func integer<I: BinaryInteger>(_ value: I, path: @autoclosure () -> [any CodingKey]) throws -> Int64 {
        guard let integer = Int64(exactly: value) else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: path(),
                debugDescription: "Unable to store \(I.self) value \(value): stored integers are 64-bit signed "
                    + "(at most \(Int64.max)). Store it as a String, or as a Double if precision may be lost."))
        }
        return integer
    }

    /// A floating-point number as REAL; NaN, which SQLite would turn into NULL, is an error.
    @inlinable @inline(__always)
    package static func real<F: BinaryFloatingPoint>(_ value: F, path: @autoclosure () -> [any CodingKey]) throws -> Double {
        guard !value.isNaN else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: path(),
                debugDescription: "Unable to store \(F.self).nan: stored numbers are never NaN (SQLite would store NULL)."))
        }
        return Double(value)
    }

    /// A JSON number; JSON has no infinity or NaN.
    @usableFromInline package static func jsonNumber<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F, at path: CodingPath) throws -> JSONNode {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: path.keys, debugDescription: "Unable to encode \(F.self).\(value) directly in JSON."))
        }
        return .number(value.description)
    }

    // MARK: Decoding

    /// A value of a special type (``isSpecial(_:)`` must be true for `T`) from a column or from JSON.
    /// `key` names the value in errors, only when one is thrown (a closure, so that decoding
    /// builds no key and allocates nothing on the common path).
    /// Always inlined, so that the caller's concrete `Source` specializes every read below even when
    /// `T` is only known at run time.
    @inlinable @inline(__always)
    package static func decode<T, Source: StoredSource>(_ type: T.Type, from source: Source, key: () -> AnyCodingKey?) throws -> T {
        if T.self == Date.self {
            return try identityCast(try date(from: source, key: key), to: T.self)
        } else if T.self == UUID.self {
            return try identityCast(try uuid(from: source, key: key), to: T.self)
        } else if T.self == URL.self {
            let text = try string(from: source, key: key)
            guard let url = URL(string: text) else {
                throw source.corrupted(key: key, "Invalid URL string \"\(DecodingFailure.preview(text))\"")
            }
            return try identityCast(url, to: T.self)
        } else if T.self == Data.self {
            return try identityCast(try data(from: source, key: key), to: T.self)
        }
        return try identityCast(try decimal(from: source, key: key), to: T.self)
    }

    @inlinable
    package static func string<Source: StoredSource>(from source: Source, key: () -> AnyCodingKey?) throws -> String {
        guard source.storageClass == .text else { throw source.unexpected(key: key, String.self) }
        return source.text()
    }

    @inlinable
    package static func uuid<Source: StoredSource>(from source: Source, key: () -> AnyCodingKey?) throws -> UUID {
        switch source.storageClass {
        case .text?:
            if let uuid = source.withUTF8(ValueParsing.uuid) { return uuid }
            throw source.corrupted(key: key, "Attempted to decode UUID from invalid UUID string \"\(DecodingFailure.preview(source.text()))\"")
        case .blob?:
            let blob = source.blob()
            if let uuid = ValueParsing.uuid(blob: blob) { return uuid }
            throw source.corrupted(key: key, "Attempted to decode UUID from a \(blob.count)-byte blob; a UUID blob has 16 bytes")
        default:
            throw source.unexpected(key: key, UUID.self)
        }
    }

    /// A BLOB in a column; Base64 text inside JSON, which has no bytes.
    @inlinable
    package static func data<Source: StoredSource>(from source: Source, key: () -> AnyCodingKey?) throws -> Data {
        switch source.storageClass {
        case .blob?:
            return source.blob()
        case .text? where source.isJSON:
            if let data = Data(base64Encoded: source.text()) { return data }
            throw source.corrupted(key: key, "Encountered Data is not valid Base64")
        default:
            throw source.unexpected(key: key, Data.self)
        }
    }

    /// Exact text; a JSON number from its literal; a REAL through its shortest text, so 19.99
    /// stays 19.99 (`Decimal(Double)` would give 19.98999… and traps on infinity).
    @inlinable
    package static func decimal<Source: StoredSource>(from source: Source, key: () -> AnyCodingKey?) throws -> Decimal {
        if let literal = source.numberLiteral {
            if let decimal = ValueParsing.decimal(literal) { return decimal }
            throw source.corrupted(key: key, "Number \(literal) does not fit in a Decimal")
        }
        switch source.storageClass {
        case .text?:
            let text = source.text()
            if let decimal = ValueParsing.decimal(text) { return decimal }
            throw source.corrupted(key: key, "Text \"\(DecodingFailure.preview(text))\" is not a decimal number")
        case .integer?:
            return Decimal(source.int64())
        case .real?:
            let double = source.double()
            if double.isFinite, let decimal = ValueParsing.decimal("\(double)") { return decimal }
            throw source.corrupted(key: key, "The REAL value \(double) does not fit in a Decimal")
        default:
            throw source.unexpected(key: key, Decimal.self)
        }
    }

    @inlinable
    package static func date<Source: StoredSource>(from source: Source, key: () -> AnyCodingKey?) throws -> Date {
        switch source.dateStrategy {
        case .iso8601:
            switch source.storageClass {
            case .text?:
                if let date = source.withUTF8(DateText.parse) { return date }
                throw source.invalidDate(key: key, source.text())
            case .integer?, .real?:
                return Date(timeIntervalSince1970: try seconds(from: source, key: key))
            default:
                throw source.unexpected(key: key, Date.self)
            }
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try seconds(from: source, key: key))
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try seconds(from: source, key: key) / 1000)
        case .deferredToDate:
            return Date(timeIntervalSinceReferenceDate: try seconds(from: source, key: key))
        case .formatted(let formatter):
            let text = try string(from: source, key: key)
            if let date = formatter.date(from: text) { return date }
            throw source.corrupted(key: key, "Date string \"\(DecodingFailure.preview(text))\" does not match format expected by formatter")
        case .custom(let decode):
            return try decode(source.decoder(key: key))
        }
    }

    /// A finite number for a `Date`: an infinite one is an error, not a `Date` that traps when printed.
    @inlinable
    package static func seconds<Source: StoredSource>(from source: Source, key: () -> AnyCodingKey?) throws -> Double {
        let seconds: Double
        switch source.storageClass {
        case .integer?: seconds = Double(source.int64())
        case .real?: seconds = source.double()
        default: throw source.unexpected(key: key, Double.self)
        }
        guard seconds.isFinite else { throw source.corrupted(key: key, "The REAL value \(seconds) is not a point in time") }
        return seconds
    }
}

/// Where ``StoredForm`` reads a stored scalar: one column of the current row, or one value
/// inside a column's JSON. It also words the errors, which name the column or JSON location.
@usableFromInline package protocol StoredSource {
    /// The kind of value: `nil` for a JSON value that is not a scalar (`true`, an array…).
    var storageClass: StorageClass? { get }
    /// Whether the value is inside JSON (where a `Data` is Base64 text).
    var isJSON: Bool { get }
    /// A JSON number's literal text, for exact `Decimal`s; `nil` in a column.
    var numberLiteral: String? { get }
    var dateStrategy: CodingStrategy.DateDecoding { get }
    func int64() -> Int64
    func double() -> Double
    func text() -> String
    func withUTF8<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
    func blob() -> Data
    /// A decoder positioned at the value, for custom date strategies.
    func decoder(key: () -> AnyCodingKey?) -> any Swift.Decoder
    func unexpected(key: () -> AnyCodingKey?, _ type: Any.Type) -> DecodingError
    func corrupted(key: () -> AnyCodingKey?, _ description: String) -> DecodingError
    func invalidDate(key: () -> AnyCodingKey?, _ text: String) -> DecodingError
}

/// How a Swift type is declared in a model table, which decides SQLite's type affinity for the column.
@usableFromInline package enum StorageType: String, Sendable {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    case blob = "BLOB"
    /// No declared type: values are stored exactly as encoded (JSON text, custom encodings).
    case untyped = ""

    /// The storage for `type`, and whether it is an `Optional`.
    @usableFromInline package static func of(_ type: Any.Type) -> (StorageType, isOptional: Bool) {
        let (wrapped, isOptional) = unwrappedOptionalType(type)
        return (nonOptional(wrapped), isOptional)
    }

    private static func nonOptional(_ type: Any.Type) -> StorageType {
        switch type {
        case is Bool.Type, is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type,
             is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type:
            return .integer
        case is Double.Type, is Float.Type:
            return .real
        case is String.Type, is Date.Type, is UUID.Type, is URL.Type, is Decimal.Type:
            return .text
        case is Data.Type:
            return .blob
        default:
            if let rawRepresentable = type as? any RawRepresentable.Type {
                return nonOptional(rawValueType(of: rawRepresentable))
            }
            return .untyped
        }
    }

    /// The default a `NOT NULL` column gets, used only for columns a newer version of the model no
    /// longer writes.
    @usableFromInline package var zeroDefault: String {
        switch self {
        case .integer: "0"
        case .real: "0.0"
        case .text, .untyped: "''"
        case .blob: "x''"
        }
    }
}

private func rawValueType<R: RawRepresentable>(of type: R.Type) -> Any.Type { R.RawValue.self }
