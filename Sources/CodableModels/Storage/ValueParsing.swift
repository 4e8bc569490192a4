import Foundation

/// Parsers that read SQLite's bytes in place, without building intermediate strings.
@usableFromInline package enum ValueParsing {
    /// A UUID from its 36-character text, upper or lower case.
    @usableFromInline package static func uuid(_ bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard bytes.count == 36 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &uuid) { output -> Bool in
            var input = 0
            for index in 0..<16 {
                if input == 8 || input == 13 || input == 18 || input == 23 {
                    guard bytes[input] == UInt8(ascii: "-") else { return false }
                    input += 1
                }
                guard let high = hexValue(bytes[input]), let low = hexValue(bytes[input + 1]) else { return false }
                output[index] = high << 4 | low
                input += 2
            }
            return true
        }
        return parsed ? UUID(uuid: uuid) : nil
    }

    /// A UUID from a 16-byte blob.
    @usableFromInline package static func uuid(blob: Data) -> UUID? {
        guard blob.count == 16 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { output in
            for (index, byte) in blob.enumerated() { output[index] = byte }
        }
        return UUID(uuid: uuid)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A decimal number written `-12.50`, `3`, `1e-7`: the whole text, nothing else.
    @usableFromInline package static func decimal(_ text: String) -> Decimal? {
        var sawDigit = false
        var state = 0  // 0 sign/int, 1 fraction, 2 exponent sign, 3 exponent digits, 4 exponent digit needed
        for (offset, byte) in text.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                sawDigit = true
                if state == 2 || state == 4 { state = 3 }
            case UInt8(ascii: "-"), UInt8(ascii: "+"):
                guard offset == 0 || state == 2 else { return nil }
                if state == 2 { state = 4 }
            case UInt8(ascii: "."):
                guard state == 0 else { return nil }
                state = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                guard state <= 1, sawDigit else { return nil }
                state = 2
            default:
                return nil
            }
        }
        guard sawDigit, state != 2, state != 4,
              let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN
        else { return nil }  // NaN: an exponent beyond Decimal's range
        return decimal
    }
}

extension ValueParsing {
    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// `uuidString`'s text (upper case, with dashes), without the per-byte `snprintf` Foundation uses.
    @usableFromInline package static func text(of uuid: UUID) -> String {
        withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { buffer in
                var output = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[output] = UInt8(ascii: "-")
                        output += 1
                    }
                    buffer[output] = hexDigits[Int(bytes[index] >> 4)]
                    buffer[output + 1] = hexDigits[Int(bytes[index] & 0x0F)]
                    output += 2
                }
                return 36
            }
        }
    }
}
